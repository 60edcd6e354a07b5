// l2norm on Vulkan: vulkan:rowgroup, a group of invocations per head, several heads per workgroup (l2norm.comp).
#include "ops/vulkan_variant.h"

namespace hl::gpu {

namespace {

void rowgroup(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const Tensor& x = a.in("x");
  const int64_t D = a.iparam("head_dim");
  if (D <= 0 || x.cols() % D) fail("l2norm: {} columns are not a multiple of the head dim {}", x.cols(), D);
  Tensor y = Tensor::device(d, x.rows(), x.cols());
  const struct {
    uint32_t groups, D;
    float scale, eps;
  } pc{u32(x.numel() / D), u32(D), float(a.param("scale")), float(a.param("eps"))};
  rowgroup_dispatch(d, "l2norm", {x.buffer(d), y.buffer_mut(d)}, pc);
  a.set("y", y);
}

}  // namespace

void register_l2norm_vulkan(Registry& r) {
  Variant v = vulkan_variant("l2norm", "vulkan:rowgroup", "32 invocations per head, several heads per workgroup, subgroup or shared sums", rowgroup, true);
  v.tunables = {{"l2norm.rowgroup.group", 32}};  // invocations per head
  r.add_variant(std::move(v));
}

}  // namespace hl::gpu
