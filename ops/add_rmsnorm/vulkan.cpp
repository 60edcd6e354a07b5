// add_rmsnorm on Vulkan: vulkan:fused, the add (of one or two addends) and the norm of the sum in one pass,
// one workgroup per normalised group (add_rmsnorm.comp), its size G a specialization constant (the loops unrolled).
#include "ops/vulkan_variant.h"

namespace hl::gpu {

namespace {

struct NormPush {
  uint32_t groups, G;
  float eps;
};

void fused(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const Tensor &x = a.in("x"), &b = a.in("a");
  const bool two = a.t.count("b") > 0;  // a second addend: y = x + (a + b)
  const Tensor& b2 = two ? a.in("b") : b;
  for (const Tensor* t : {&b, &b2})
    if (t->rows() != x.rows() || t->cols() != x.cols())
      fail("add_rmsnorm: x is [{}, {}] but an addend is [{}, {}]", x.rows(), x.cols(), t->rows(), t->cols());
  const Tensor gain = c.weights->device(a.weight("gain"));
  const int64_t G = gain.numel();
  if (G == 0 || x.cols() % G) fail("add_rmsnorm: {} columns are not a multiple of the gain length {}", x.cols(), G);
  const NormPush pc{u32(x.numel() / G), u32(G), float(a.param("eps"))};
  Tensor y = Tensor::device(d, x.rows(), x.cols()), n = Tensor::device(d, x.rows(), x.cols());
  const auto& p = d.pipeline("add_rmsnorm", {{0, d.tune("add_rmsnorm.fused.wg")}, {1, two ? 1u : 0u}, {2, u32(G)}}, 6, sizeof pc);
  const Grid g = grid(pc.groups);
  d.dispatch(p, {x.buffer(d), b.buffer(d), b2.buffer(d), gain.buffer(d), y.buffer_mut(d), n.buffer_mut(d)}, pc, g.x, g.y);
  a.set("y", y);
  a.set("n", n);
}

}  // namespace

void register_add_rmsnorm_vulkan(Registry& r) {
  r.add_variant(vulkan_variant("add_rmsnorm", "vulkan:fused",
                               "one workgroup per normalised group: the add (of one or two addends), then the norm of the sum",
                               fused, true));
}

}  // namespace hl::gpu
