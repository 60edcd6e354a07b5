// matmul and lm_head for prompt chunks on 8-bit integer dot products (vulkan:qgemm_i8, qgemm_i8.comp): X rounded to 8
// bits per 32 values (quantize_x8.comp), the weights' ggml blocks staged in shared memory as bytes inside the K loop,
// each 16-value run's products in four 4-way dot products. What a device without matrix units runs instead of f32
// FMAs on decoded tiles (vulkan:qgemm): a quarter of the instructions per product and of the shared-memory bytes.
#include "ops/matmul/quant_rows.h"

namespace hl::gpu {

namespace {

struct Tile {
  uint32_t sr, sc, slots;  // invocation rows and columns, slots per K step
};

constexpr uint32_t kTM = 4, kTN = 8;  // outputs per invocation (qgemm_i8.comp QI_TM, QI_TN)

// Staged bytes per step: each row's runs (4 per slot, 16 bytes each, one unit of padding) and two vec4 per slot.
uint64_t shared_bytes(const Tile& t) {
  const uint64_t rows = uint64_t(kTM) * t.sr + uint64_t(kTN) * t.sc;
  return rows * (16 * (4 * t.slots + 1) + 32 * t.slots);
}

void qgemm_i8(VariantCtx& c, OpArgs& a, const std::string& op) {
  Device& d = c.device();
  const std::string what = op + " vulkan:qgemm_i8", tn = op + ".qgemm_i8.";
  const WeightRef& wr = a.weight("w");
  const auto type = wr.storage_type();
  if (type != quant::Type::Q4_K && type != quant::Type::Q5_K && type != quant::Type::Q6_K && type != quant::Type::Q8_0)
    fail("{}: weight '{}' is {}; this variant reads q8_0, q4_K, q5_K or q6_K blocks", what, wr.name(), quant::type_name(type));
  const Tensor& x = a.in("x");
  if (x.cols() != wr.cols) fail("{}: input has {} columns but the weight expects {}", what, x.cols(), wr.cols);
  const Tensor w = vk_quant_rows(c, wr, what);
  const uint32_t T = u32(x.rows()), K = u32(wr.cols), N = u32(wr.rows);
  const uint32_t slots = type == quant::Type::Q8_0 ? K / 32 : K / 64;  // quant_slots.glsl
  Tile t{d.tune(tn + "thread_rows"), d.tune(tn + "thread_cols"), d.tune(tn + "slots")};
  if (!t.sr || !t.sc || !t.slots) fail("{}: tunables thread_rows, thread_cols and slots must be at least 1", what);
  if (uint64_t(t.sr) * t.sc > d.info().max_workgroup_invocations)
    fail("{}: {} x {} invocations exceed the device's {} per workgroup", what, t.sr, t.sc, d.info().max_workgroup_invocations);
  while (t.slots > 1 && (slots % t.slots || shared_bytes(t) > d.info().max_shared_memory)) --t.slots;
  if (shared_bytes(t) > d.info().max_shared_memory)
    fail("{}: a {} x {} tile stages {} bytes, past the device's {} bytes of shared memory", what, kTM * t.sr, kTN * t.sc,
         shared_bytes(t), d.info().max_shared_memory);
  const X8 x8 = quantize_x8(d, x);
  struct {
    uint32_t T, K, N, row_bytes, ncol;
  } pc{T, K, N, u32(int64_t(quant::row_bytes(type, wr.cols))), (N + kTN * t.sc - 1) / (kTN * t.sc)};
  Tensor y = Tensor::device(d, T, N);
  const auto& p = d.pipeline("qgemm_i8", {{0, t.sr * t.sc}, {1, t.sr}, {2, t.sc}, {3, uint32_t(type)}, {4, t.slots}}, 5,
                             sizeof pc);
  const Grid g = grid(uint64_t((T + kTM * t.sr - 1) / (kTM * t.sr)) * pc.ncol);
  d.dispatch(p, {x8.q.buffer(d), x8.d.buffer(d), x8.s.buffer(d), w.buffer(d), y.buffer_mut(d)}, pc, g.x, g.y);
  a.set("y", y);
}

}  // namespace

void register_matmul_vulkan_qgemm_i8(Registry& r) {
  for (std::string op : {"matmul", "lm_head"}) {
    Variant v = vulkan_variant(
        op, "vulkan:qgemm_i8",
        "prompt chunks: x rounded to 8 bits per 32 values, ggml blocks staged as bytes in the K loop, 4-way integer dot "
        "products on a tile of TM x TN outputs per invocation",
        [op](VariantCtx& c, OpArgs& a) { qgemm_i8(c, a, op); }, false, false,
        [](const Device& d) { return d.info().integer_dot_product ? "" : "the device has no shader integer dot product"; });
    // Invocation rows and columns (a tile of 4 thread_rows x 8 thread_cols), slots (64 values; q8_0: 32) per K step.
    v.tunables = {{op + ".qgemm_i8.thread_rows", 16}, {op + ".qgemm_i8.thread_cols", 16}, {op + ".qgemm_i8.slots", 2}};
    // x rounded as for qmatvec_i8_staged (vulkan_quant.cpp): ~0.5% relative L2 of y on Gaussian data; 2e-2.
    v.precision_tolerance = 2e-2;
    v.quantized_weights_only = true;
    v.weight_types = {quant::Type::Q8_0, quant::Type::Q4_K, quant::Type::Q5_K, quant::Type::Q6_K};
    r.add_variant(std::move(v));
  }
}

}  // namespace hl::gpu
