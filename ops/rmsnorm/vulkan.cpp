// rmsnorm on Vulkan: vulkan:rowgroup, a group of invocations per normalised group, several per workgroup (rmsnorm.comp).
#include "ops/vulkan_variant.h"

namespace hl::gpu {

namespace {

struct NormPush {
  uint32_t groups, D;  // D: the group's values (rowgroup_dispatch's name)
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
  rowgroup_dispatch(d, "rmsnorm", {x.buffer(d), gain.buffer(d), y.buffer_mut(d)}, pc);
  a.set("y", y);
}

}  // namespace

void register_rmsnorm_vulkan(Registry& r) {
  Variant v = vulkan_variant("rmsnorm", "vulkan:rowgroup", "a group of invocations per normalised group, several groups per workgroup, subgroup or shared sums",
                             rowgroup, true);
  // Invocations per group; 0: 8 values each (a head of 256 on 32 invocations, the hidden 2048 on 256), the best of
  // the H200 sweep at T = 4096 for both widths. At most the workgroup and the group's values (rowgroup_dispatch).
  v.tunables = {{"rmsnorm.rowgroup.group", 0, {}}};
  r.add_variant(std::move(v));
}

}  // namespace hl::gpu
