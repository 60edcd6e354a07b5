// moe_router: softmax over the experts, top-k, renormalised.
// The op's signature, its reference variant and its Vulkan variants (README.md lists them).
#include "ops/moe_router/reference.h"
#include "ops/registry.h"

namespace hl::gpu {

OpDef moe_router_with_cases(OpDef d);  // cases.cpp: its cases, tolerance and goldens
void register_moe_router_vulkan(Registry& r);  // vulkan.cpp

void register_moe_router(Registry& r) {
  r.add_op(moe_router_with_cases({"moe_router", "logits [T, E] -> softmax, top-k, renormalised: expert (i32) [T, k], weight [T, k]", {"logits"}, {},
            {}, {"expert", "weight"}, {"k"}}));
  r.add_variant(reference_variant("moe_router", "the oracle (ops/moe_router/reference.h), f32 on the host", [](VariantCtx&, OpArgs& a) {
    auto routes = ref::moe_router(a.in("logits").f32(), int(a.iparam("k")));
    a.set("expert", Tensor::from_i32(std::move(routes.expert)));
    a.set("weight", Tensor::from(std::move(routes.weight)));
  }));
  register_moe_router_vulkan(r);
}

}  // namespace hl::gpu
