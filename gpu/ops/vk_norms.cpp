// Vulkan variants of the norms: rmsnorm, and the residual add fused with the norm after it (add_rmsnorm).
#include "gpu/ops/vk_op.h"

namespace hl::gpu {

namespace {

// Both kernels normalise groups of G = len(gain) columns, one workgroup per group.
struct NormPush {
  uint32_t groups, G;
  float eps;
};

NormPush norm_push(const char* op, const Tensor& x, const Tensor& gain, double eps) {
  const int64_t G = gain.numel();
  if (G == 0 || x.cols() % G) fail("{}: {} columns are not a multiple of the gain length {}", op, x.cols(), G);
  return {u32(x.numel() / G), u32(G), float(eps)};
}

}  // namespace

void register_vk_norms(Registry& r) {
  r.add_variant(vulkan_variant("rmsnorm", "vulkan:rowgroup", "one workgroup per normalised group, workgroup reduction",
                               [](VariantCtx& c, OpArgs& a) {
    Device& d = c.device();
    const Tensor& x = a.in("x");
    const Tensor gain = c.weights->device(a.weight("gain"));
    const NormPush pc = norm_push("rmsnorm", x, gain, a.param("eps"));
    Tensor y = Tensor::device(d, x.rows(), x.cols());
    const auto& p = d.pipeline("rmsnorm", {{0, d.tune("rmsnorm.rowgroup.wg")}}, 3, sizeof pc);
    const Grid g = grid(pc.groups);
    d.dispatch(p, {x.buffer(d), gain.buffer(d), y.buffer_mut(d)}, pc, g.x, g.y);
    a.set("y", y);
  }, true));
  r.add_variant(vulkan_variant("add_rmsnorm", "vulkan:fused", "one workgroup per normalised group: the add (of one or two addends), then the norm of the sum",
                               [](VariantCtx& c, OpArgs& a) {
    Device& d = c.device();
    const Tensor &x = a.in("x"), &b = a.in("a");
    const bool two = a.t.count("b") > 0;  // a second addend: y = x + (a + b)
    const Tensor& b2 = two ? a.in("b") : b;
    for (const Tensor* t : {&b, &b2})
      if (t->rows() != x.rows() || t->cols() != x.cols())
        fail("add_rmsnorm: x is [{}, {}] but an addend is [{}, {}]", x.rows(), x.cols(), t->rows(), t->cols());
    const Tensor gain = c.weights->device(a.weight("gain"));
    const NormPush pc = norm_push("add_rmsnorm", x, gain, a.param("eps"));
    Tensor y = Tensor::device(d, x.rows(), x.cols()), n = Tensor::device(d, x.rows(), x.cols());
    const auto& p = d.pipeline("add_rmsnorm", {{0, d.tune("add_rmsnorm.fused.wg")}, {1, two ? 1u : 0u}}, 6, sizeof pc);
    const Grid g = grid(pc.groups);
    d.dispatch(p, {x.buffer(d), b.buffer(d), b2.buffer(d), gain.buffer(d), y.buffer_mut(d), n.buffer_mut(d)}, pc, g.x, g.y);
    a.set("y", y);
    a.set("n", n);
  }, true));
}

}  // namespace hl::gpu
