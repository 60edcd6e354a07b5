// ssm_gates on Vulkan: vulkan:elementwise, an invocation per (token, value head) (ssm_gates.comp).
#include "ops/vulkan_variant.h"

namespace hl::gpu {

namespace {

void elementwise(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const Tensor &b = a.in("b"), &ap = a.in("a");
  const Tensor A = c.weights->device(a.weight("A")), dt = c.weights->device(a.weight("dt_bias"));
  const int64_t nv = A.numel();
  if (b.cols() != nv || ap.cols() != nv || dt.numel() != nv || ap.rows() != b.rows())
    fail("ssm_gates: b [{}, {}], a [{}, {}], A [{}], dt_bias [{}] are inconsistent", b.rows(), b.cols(), ap.rows(),
         ap.cols(), nv, dt.numel());
  Tensor beta = Tensor::device(d, b.rows(), nv), g = Tensor::device(d, b.rows(), nv);
  const struct {
    uint32_t n, nv;
  } pc{u32(b.numel()), u32(nv)};
  const uint32_t wg = d.tune("ssm_gates.elementwise.wg");
  const auto& p = d.pipeline("ssm_gates", {{0, wg}}, 6, sizeof pc);
  const Grid gr = grid((uint64_t(pc.n) + wg - 1) / wg);
  d.dispatch(p, {b.buffer(d), ap.buffer(d), A.buffer(d), dt.buffer(d), beta.buffer_mut(d), g.buffer_mut(d)}, pc, gr.x, gr.y);
  a.set("beta", beta);
  a.set("g", g);
}

}  // namespace

void register_ssm_gates_vulkan(Registry& r) {
  r.add_variant(vulkan_variant("ssm_gates", "vulkan:elementwise", "an invocation per (token, value head)", elementwise, true));
}

}  // namespace hl::gpu
