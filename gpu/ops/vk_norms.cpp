// Vulkan variants of the norms: rmsnorm.
#include "gpu/ops/vk_op.h"

namespace hl::gpu {

void register_vk_norms(Registry& r) {
  r.add_variant(vulkan_variant("rmsnorm", "vulkan:rowgroup", "one workgroup per normalised group, workgroup reduction",
                               [](VariantCtx& c, OpArgs& a) {
    Device& d = c.device();
    const Tensor& x = a.in("x");
    const Tensor gain = c.weights->device(a.weight("gain"));
    const int64_t G = gain.numel();
    if (G == 0 || x.cols() % G) fail("rmsnorm: {} columns are not a multiple of the gain length {}", x.cols(), G);
    Tensor y = Tensor::device(d, x.rows(), x.cols());
    struct {
      uint32_t groups, G;
      float eps;
    } pc{u32(x.numel() / G), u32(G), float(a.param("eps"))};
    const auto& p = d.pipeline("rmsnorm", {{0, d.tune("rmsnorm.rowgroup.wg")}}, 3, sizeof pc);
    const Grid g = grid(pc.groups);
    d.dispatch(p, {x.buffer(d), gain.buffer(d), y.buffer_mut(d)}, pc, g.x, g.y);
    a.set("y", y);
  }, true));
}

}  // namespace hl::gpu
