// rmsnorm on Vulkan: vulkan:rowgroup, one workgroup per normalised group (rmsnorm.comp).
#include "ops/vulkan_variant.h"

namespace hl::gpu {

namespace {

struct NormPush {
  uint32_t groups, G;
  float eps;
};

void rowgroup(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const Tensor& x = a.in("x");
  const Tensor gain = c.weights->device(a.weight("gain"));
  const int64_t G = gain.numel();
  if (G == 0 || x.cols() % G) fail("rmsnorm: {} columns are not a multiple of the gain length {}", x.cols(), G);
  const NormPush pc{u32(x.numel() / G), u32(G), float(a.param("eps"))};
  Tensor y = Tensor::device(d, x.rows(), x.cols());
  const auto& p = d.pipeline("rmsnorm", {{0, d.tune("rmsnorm.rowgroup.wg")}, {1, pc.G}}, 3, sizeof pc);
  const Grid g = grid(pc.groups);
  d.dispatch(p, {x.buffer(d), gain.buffer(d), y.buffer_mut(d)}, pc, g.x, g.y);
  a.set("y", y);
}

}  // namespace

void register_rmsnorm_vulkan(Registry& r) {
  r.add_variant(vulkan_variant("rmsnorm", "vulkan:rowgroup", "one workgroup per normalised group, workgroup reduction",
                               rowgroup, true));
}

}  // namespace hl::gpu
