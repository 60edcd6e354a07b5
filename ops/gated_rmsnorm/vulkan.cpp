// gated_rmsnorm on Vulkan: vulkan:rowgroup, a group of invocations per head, several heads per workgroup
// (gated_rmsnorm.comp).
#include "ops/vulkan_variant.h"

namespace hl::gpu {

namespace {

void rowgroup(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const Tensor &o = a.in("o"), &z = a.in("z");
  const Tensor gain = c.weights->device(a.weight("gain"));
  const int64_t D = gain.numel();
  if (o.rows() != z.rows() || o.cols() != z.cols())
    fail("gated_rmsnorm: o [{}, {}] and z [{}, {}] differ", o.rows(), o.cols(), z.rows(), z.cols());
  if (D == 0 || o.cols() % D) fail("gated_rmsnorm: {} columns are not a multiple of the gain length {}", o.cols(), D);
  Tensor y = Tensor::device(d, o.rows(), o.cols());
  const struct {
    uint32_t groups, D;
    float eps;
  } pc{u32(o.numel() / D), u32(D), float(a.param("eps"))};
  rowgroup_dispatch(d, "gated_rmsnorm", {o.buffer(d), z.buffer(d), gain.buffer(d), y.buffer_mut(d)}, pc);
  a.set("y", y);
}

}  // namespace

void register_gated_rmsnorm_vulkan(Registry& r) {
  Variant v = vulkan_variant("gated_rmsnorm", "vulkan:rowgroup", "32 invocations per head, several heads per workgroup, subgroup or shared sums", rowgroup, true);
  // Invocations per head: 32 (4 values each) was the H200's best at T = 512 and 4096 (53.8 us at 4096 against 117 for
  // a head on 128 invocations).
  v.tunables = {{"gated_rmsnorm.rowgroup.group", 32, {}}};
  r.add_variant(std::move(v));
}

}  // namespace hl::gpu
