// ssm_conv: the Gated DeltaNet's causal depthwise convolution with SiLU, carrying the last K-1 inputs.
// The op's signature, its reference variant and its Vulkan variants (README.md lists them).
#include "ops/ssm_conv/reference.h"
#include "ops/registry.h"

namespace hl::gpu {

OpDef ssm_conv_with_cases(OpDef d);  // cases.cpp: its cases, tolerance and goldens
void register_ssm_conv_vulkan(Registry& r);  // vulkan.cpp

void register_ssm_conv(Registry& r) {
  r.add_op(ssm_conv_with_cases({"ssm_conv", "x [T, C], w [C, K], state [K-1, C] (carried) -> silu(causal depthwise conv) [T, C]", {"x"}, {"w"},
            {"state"}, {"y"}, {}}));
  r.add_variant(reference_variant("ssm_conv", "the oracle (ops/ssm_conv/reference.h), f32 on the host", [](VariantCtx& c, OpArgs& a) {
    a.set("y", Tensor::from(ref::ssm_conv(a.in("x").f32(), c.weights->host(a.weight("w")).f32(), a.state("state").f32_mut())));
  }));
  register_ssm_conv_vulkan(r);
}

}  // namespace hl::gpu
