// Vulkan variants of matmul (and lm_head, the same product with a vocabulary-sized output):
// tiled (shared-memory tiles, for many tokens), rowdot (a workgroup per output row, for decode), and
// auto (rowdot up to rowdot.max_tokens tokens, tiled above), the family default. auto sends quantized
// weights to the kernels that read their blocks (gpu/ops/vk_quant.cpp): qmatvec for decode, qcols above.
#include "gpu/ops/vk_op.h"

namespace hl::gpu {

namespace {

struct Dims {
  uint32_t T, K, N;
};

Dims dims(const Tensor& x, const Tensor& w) {
  if (x.cols() != w.cols()) fail("matmul: input has {} columns but the weight expects {}", x.cols(), w.cols());
  return {u32(x.rows()), u32(x.cols()), u32(w.rows())};
}

void tiled(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const Tensor& x = a.in("x");
  const Tensor w = c.weights->device(a.weight("w"));
  const Dims pc = dims(x, w);
  Tensor y = Tensor::device(d, pc.T, pc.N);
  const uint32_t tile = d.tune("matmul.tiled.tile");
  const auto& p = d.pipeline("matmul_tiled", {{0, tile}}, 3, sizeof pc);
  d.dispatch(p, {x.buffer(d), w.buffer(d), y.buffer_mut(d)}, pc, (pc.N + tile - 1) / tile, (pc.T + tile - 1) / tile);
  a.set("y", y);
}

void rowdot(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const Tensor& x = a.in("x");
  const Tensor w = c.weights->device(a.weight("w"));
  const Dims pc = dims(x, w);
  Tensor y = Tensor::device(d, pc.T, pc.N);
  const auto& p = d.pipeline("matmul_rowdot", {{0, d.tune("matmul.rowdot.wg")},
                                               {1, d.tune("matmul.rowdot.cols")}},
                             3, sizeof pc);
  const Grid g = grid(pc.N);
  d.dispatch(p, {x.buffer(d), w.buffer(d), y.buffer_mut(d)}, pc, g.x, g.y);
  a.set("y", y);
}

void automatic(VariantCtx& c, OpArgs& a, const std::string& op) {
  const int64_t T = a.in("x").rows();
  if (a.weight("w").quantized() && vk_quant_decodes(a.weight("w"))) {
    const Device& d = c.device();
    if (T > int64_t(d.tune("matmul.auto.qmatvec_tokens"))) return Registry::get().variant(op, "vulkan:qcols").run(c, a);
    // Decode: large q6_K weights in planar rows (exact f32 like the others, the 210-byte blocks read with aligned
    // loads); else qmatvec_direct where x fits its shared memory and the tunable asks, else qmatvec.
    const uint32_t planar_rows = d.tune("matmul.auto.decode_planar_rows");
    if (a.weight("w").storage_type() == quant::Type::Q6_K && planar_rows && a.weight("w").rows >= int64_t(planar_rows))
      return Registry::get().variant(op, "vulkan:qmatvec_planar").run(c, a);
    const bool direct = d.tune("matmul.auto.decode_direct") && uint64_t(a.weight("w").cols) * 4 <= d.info().max_shared_memory;
    return Registry::get().variant(op, direct ? "vulkan:qmatvec_direct" : "vulkan:qmatvec").run(c, a);
  }
  (T <= int64_t(c.device().tune("matmul.auto.rowdot_tokens")) ? rowdot : tiled)(c, a);
}

}  // namespace

void register_vk_matmul(Registry& r) {
  for (std::string op : {"matmul", "lm_head"}) {
    r.add_variant(vulkan_variant(op, "vulkan:tiled", "shared-memory tiles of TILE x TILE outputs", tiled));
    r.add_variant(vulkan_variant(op, "vulkan:rowdot", "a workgroup per output row, weights read once per 8 tokens", rowdot));
    r.add_variant(vulkan_variant(op, "vulkan:auto", "rowdot for up to 8 tokens, tiled above; quantized weights: qmatvec_planar (q6_K), qmatvec_direct (or qmatvec), qcols",
                                 [op](VariantCtx& c, OpArgs& a) { automatic(c, a, op); }, true));
  }
}

}  // namespace hl::gpu
