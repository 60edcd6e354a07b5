// The quantized GEMM on 8-bit integer dot products (qgemm_i8.h): its host side, and matmul's and lm_head's
// vulkan:qgemm_i8 for prompt chunks. Against vulkan:qgemm's f32 FMAs on decoded tiles: a quarter of the product
// instructions and of the staged bytes.
#include "ops/matmul/qgemm_i8.h"

namespace hl::gpu {

namespace {

constexpr uint32_t kTM = 4;  // A rows per invocation (every kernel); weight rows: dense 8, routed 4

struct Tile {
  uint32_t sr, sc, slots, tn;
  bool gated;
  uint32_t rows() const { return kTM * sr; }
  uint32_t cols() const { return tn * sc; }
};

// Staged bytes per step: each row's runs (4 per slot, 16 bytes each, one unit of padding), two vec4 per slot, the row ids.
uint64_t shared_bytes(const Tile& t) {
  const uint64_t rows = t.rows() + uint64_t(t.gated ? 2 : 1) * t.cols();
  return rows * (16 * (4 * t.slots + 1) + 32 * t.slots) + 4ull * t.rows();
}

// The tunables' tile for K values of `type`: slots per step lowered until they divide the row's and fit shared memory.
Tile tile(const Device& d, const std::string& prefix, bool routed, bool gated, uint32_t K, uint32_t type) {
  Tile t{d.tune(prefix + "thread_rows"), d.tune(prefix + "thread_cols"), d.tune(prefix + "slots"), routed ? 4u : 8u, gated};
  if (!t.sr || !t.sc || !t.slots) fail("qgemm_i8: {}thread_rows, thread_cols and slots must be at least 1", prefix);
  if (uint64_t(t.sr) * t.sc > d.info().max_workgroup_invocations)
    fail("qgemm_i8: {} x {} invocations exceed the device's {} per workgroup", t.sr, t.sc, d.info().max_workgroup_invocations);
  const uint32_t slots = quant::Type(type) == quant::Type::Q8_0 ? K / 32 : K / 64;  // quant_slots.glsl
  while (t.slots > 1 && (slots % t.slots || shared_bytes(t) > d.info().max_shared_memory)) --t.slots;
  if (shared_bytes(t) > d.info().max_shared_memory)
    fail("qgemm_i8: a {} x {} tile stages {} bytes, past the device's {} bytes of shared memory", t.rows(), t.cols(),
         shared_bytes(t), d.info().max_shared_memory);
  return t;
}

void check(const QgemmWeight& w, uint32_t K) {
  if (!qgemm_i8_reads(quant::Type(w.type)))
    fail("qgemm_i8: weight of type {}; it reads q8_0, q4_K, q5_K or q6_K blocks", quant::type_name(quant::Type(w.type)));
  if (K % (quant::Type(w.type) == quant::Type::Q8_0 ? 32 : 256)) fail("qgemm_i8: rows of {} values, not whole blocks", K);
}

struct Push {
  uint32_t E, K, N, k, ncol, row_bytes, T;
};

const vk::Pipeline& pipeline(Device& d, const std::string& prefix, const Tile& t, uint32_t mode, uint32_t type) {
  const char* shader = !mode ? "qgemm_i8" : t.gated ? "qgemm_i8_gate" : "qgemm_i8_down";
  return d.pipeline(shader, {{0, t.sr * t.sc}, {1, t.sr}, {2, t.sc}, {3, type}, {4, t.slots}, {5, mode}, {6, d.tune(prefix + "prefetch")},
                     {7, d.profile().get(prefix + "skip_rows", 0)}},
                    9, sizeof(Push));
}

}  // namespace

bool qgemm_i8_reads(quant::Type t) {
  return t == quant::Type::Q4_K || t == quant::Type::Q5_K || t == quant::Type::Q6_K || t == quant::Type::Q8_0;
}

std::string qgemm_i8_unavailable(const Device& d) {
  return d.info().integer_dot_product ? "" : "the device has no shader integer dot product";
}

uint32_t qgemm_i8_tile_rows(const Device& d, const std::string& prefix) { return kTM * std::max(1u, d.tune(prefix + "thread_rows")); }

Tensor qgemm_i8_dense(Device& d, const std::string& prefix, const X8& x, const QgemmWeight& w, uint32_t N, uint32_t K) {
  check(w, K);
  const uint32_t T = u32(x.q.rows());
  Tile t = tile(d, prefix, false, false, K, w.type);
  // Fewer rows per tile while the grid would be smaller than min_groups workgroups (a narrow output, few tokens).
  const uint32_t min_groups = d.tune(prefix + "min_groups");
  const auto groups = [&](const Tile& u) { return uint64_t((T + u.rows() - 1) / u.rows()) * ((N + u.cols() - 1) / u.cols()); };
  while (t.sr > 1 && groups(t) < min_groups) t.sr /= 2;
  const Push pc{0, K, N, 0, (N + t.cols() - 1) / t.cols(), w.row_bytes, T};
  Tensor y = Tensor::device(d, T, N);
  const BufferPtr b = w.t.buffer(d);
  const Grid g = grid(uint64_t((T + t.rows() - 1) / t.rows()) * pc.ncol);
  d.dispatch(pipeline(d, prefix, t, 0, w.type), {x.q.buffer(d), x.d.buffer(d), x.s.buffer(d), b, b, y.buffer_mut(d), b, b, b}, pc,
             g.x, g.y);
  return y;
}

void qgemm_i8_routed(Device& d, const std::string& prefix, const route_pack::Packed& p, bool gated, const X8& a,
                     const QgemmWeight& w0, const QgemmWeight& w1, Tensor& out, uint32_t K, uint32_t N) {
  check(w0, K);
  if (gated && w1.type != w0.type)
    fail("qgemm_i8: gate ({}) and up ({}) differ in type; one pass decodes one", quant::type_name(quant::Type(w0.type)),
         quant::type_name(quant::Type(w1.type)));
  if (gated && w1.row_bytes != w0.row_bytes) fail("qgemm_i8: gate and up rows differ in bytes");
  const Tile t = tile(d, prefix, true, gated, K, w0.type);
  if (uint64_t(p.tile_rows) != t.rows())
    fail("qgemm_i8: routes packed in tiles of {} rows, the kernel's tiles have {}", p.tile_rows, t.rows());
  const uint64_t rows = p.rows.cols();
  const Push pc{u32(p.E), K, N, u32(p.k), (N + t.cols() - 1) / t.cols(), w0.row_bytes, u32(int64_t(rows))};
  // Row tiles: sum over experts of ceil(rows_e / BR) <= ceil(rows / BR) + (experts with rows).
  const uint64_t tiles = (rows + t.rows() - 1) / t.rows() + std::min<uint64_t>(p.E, rows);
  const Grid g = grid(tiles * pc.ncol);
  d.dispatch(pipeline(d, prefix, t, 1, w0.type),
             {a.q.buffer(d), a.d.buffer(d), a.s.buffer(d), w0.t.buffer(d), w1.t.buffer(d), out.buffer_mut(d), p.rows.buffer(d),
              p.offsets.buffer(d), p.tiles.buffer(d)},
             pc, g.x, g.y);
}

void register_matmul_vulkan_qgemm_i8(Registry& r) {
  for (std::string op : {"matmul", "lm_head"}) {
    const std::string prefix = op + ".qgemm_i8.";
    Variant v = vulkan_variant(
        op, "vulkan:qgemm_i8",
        "prompt chunks: x rounded to 8 bits per 32 values, ggml blocks staged as bytes in the K loop, 4-way integer dot "
        "products on a tile of 4 x 8 outputs per invocation",
        [op, prefix](VariantCtx& c, OpArgs& a) {
          const std::string what = op + " vulkan:qgemm_i8";
          const WeightRef& w = a.weight("w");
          if (!qgemm_i8_reads(w.storage_type()))
            fail("{}: weight '{}' is {}; this variant reads q8_0, q4_K, q5_K or q6_K blocks", what, w.name(),
                 quant::type_name(w.storage_type()));
          const Tensor& x = a.in("x");
          if (x.cols() != w.cols) fail("{}: input has {} columns but the weight expects {}", what, x.cols(), w.cols);
          Device& d = c.device();
          a.set("y", qgemm_i8_dense(d, prefix, quantize_x8(d, x), qgemm_weight(c, w, what), u32(w.rows), u32(w.cols)));
        },
        false, false, qgemm_i8_unavailable);
    // Invocation rows and columns (a tile of 4 thread_rows x 8 thread_cols), slots (64 values; q8_0: 32) per K step,
    // prefetch 1: the next step's A and Q4_K / Q5_K weight words in registers during this step's products.
    // min_groups: halve thread_rows while the grid would have fewer workgroups (0: never).
    v.tunables = {{prefix + "thread_rows", 16}, {prefix + "thread_cols", 16}, {prefix + "slots", 1}, {prefix + "prefetch", 1},
                  {prefix + "min_groups", 0}};
    v.precision_tolerance = kQgemmI8Tolerance;
    v.quantized_weights_only = true;
    v.weight_types = {quant::Type::Q8_0, quant::Type::Q4_K, quant::Type::Q5_K, quant::Type::Q6_K};
    r.add_variant(std::move(v));
  }
}

}  // namespace hl::gpu
