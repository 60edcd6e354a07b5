// add on Vulkan: vulkan:elementwise, one invocation per element (add.comp).
#include "ops/vulkan_variant.h"

namespace hl::gpu {

void register_add_vulkan(Registry& r) {
  Variant v = vulkan_variant("add", "vulkan:elementwise", "one invocation per element", [](VariantCtx& c, OpArgs& a) {
    Device& d = c.device();
    const Tensor &x = a.in("a"), &y = a.in("b");
    if (x.rows() != y.rows() || x.cols() != y.cols())
      fail("add: [{}, {}] + [{}, {}]", x.rows(), x.cols(), y.rows(), y.cols());
    Tensor out = Tensor::device(d, x.rows(), x.cols());
    const uint32_t wg = d.tune("add.elementwise.wg");
    const auto& p = d.pipeline("add", {{0, wg}}, 3, 4);
    const uint32_t n = u32(x.numel());
    const Grid g = grid((n + wg - 1) / wg);
    d.dispatch(p, {x.buffer(d), y.buffer(d), out.buffer_mut(d)}, n, g.x, g.y);
    a.set("y", out);
  }, true);
  v.tunables = {{"add.elementwise.wg", 256}};
  r.add_variant(std::move(v));
}

}  // namespace hl::gpu
