// ssm_gates: the Gated DeltaNet's gates, beta = sigmoid(b) and g = A * softplus(a + dt_bias).
// The op's signature, its reference variant and its Vulkan variants (README.md lists them).
#include "ops/ssm_gates/reference.h"
#include "ops/registry.h"

namespace hl::gpu {

OpDef ssm_gates_with_cases(OpDef d);  // cases.cpp: its cases, tolerance and goldens
void register_ssm_gates_vulkan(Registry& r);  // vulkan.cpp

void register_ssm_gates(Registry& r) {
  r.add_op(ssm_gates_with_cases({"ssm_gates", "b, a [T, n_v] -> beta = sigmoid(b), g = A * softplus(a + dt_bias)", {"b", "a"}, {"A", "dt_bias"}, {},
            {"beta", "g"}, {}}));
  r.add_variant(reference_variant("ssm_gates", "the oracle (ops/ssm_gates/reference.h), f32 on the host", [](VariantCtx& c, OpArgs& a) {
    auto g = ref::ssm_gates(a.in("b").f32(), a.in("a").f32(), c.weights->host_vec(a.weight("A")),
                            c.weights->host_vec(a.weight("dt_bias")));
    a.set("beta", Tensor::from(std::move(g.beta)));
    a.set("g", Tensor::from(std::move(g.g)));
  }));
  register_ssm_gates_vulkan(r);
}

}  // namespace hl::gpu
