// rmsnorm: RMSNorm over groups of columns (the input, post-attention and final norms; the q/k head norms).
// The op's signature, its reference variant and its Vulkan variants (README.md lists them).
#include "ops/rmsnorm/reference.h"
#include "ops/registry.h"

namespace hl::gpu {

OpDef rmsnorm_with_cases(OpDef d);  // cases.cpp: its cases, tolerance and goldens
void register_rmsnorm_vulkan(Registry& r);  // vulkan.cpp

void register_rmsnorm(Registry& r) {
  r.add_op(rmsnorm_with_cases({"rmsnorm", "x [T, n*G] -> each group of G = len(gain): x / rms(x) * gain", {"x"}, {"gain"}, {}, {"y"}, {"eps"}}));
  r.add_variant(reference_variant("rmsnorm", "the oracle (ops/rmsnorm/reference.h), f32 on the host", [](VariantCtx& c, OpArgs& a) {
    a.set("y", Tensor::from(ref::rmsnorm(a.in("x").f32(), c.weights->host_vec(a.weight("gain")), a.param("eps"))));
  }));
  register_rmsnorm_vulkan(r);
}

}  // namespace hl::gpu
