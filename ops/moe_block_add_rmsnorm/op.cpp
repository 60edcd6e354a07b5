// moe_block_add_rmsnorm: a layer's MoE block and the residual add and norm that follow it (the next layer's input norm,
// or the final norm): y = res + moe_block(x), n = rmsnorm(y) * gain. A composite op (parts: moe_block, add_rmsnorm):
// with its reference variant the forward pass runs the parts, each as the plan picks it; its Vulkan variant runs it as
// moe_block's three dispatches, the last one doing the add and norm (README.md).
#include "ops/registry.h"

namespace hl::gpu {

OpDef moe_block_add_rmsnorm_with_cases(OpDef d);  // cases.cpp: its cases and tolerance
void register_moe_block_add_rmsnorm_vulkan(Registry& r);  // vulkan.cpp

void register_moe_block_add_rmsnorm(Registry& r) {
  r.add_op(moe_block_add_rmsnorm_with_cases(
      {"moe_block_add_rmsnorm",
       "x [T, H] (the normed stream), res [T, H] (the residual), moe_block's weights, gain [H] -> y = res + moe_block(x), "
       "n = rmsnorm(y) * gain",
       {"x", "res"}, {"router", "gate", "up", "down", "sgate", "sup", "sdown", "gate_w", "gain"}, {}, {"y", "n"},
       {"k", "n_experts", "eps"}, /*live=*/false, /*parts=*/{"moe_block", "add_rmsnorm"}}));
  // The parts' reference variants composed, as the unfused forward pass runs them.
  r.add_variant(reference_variant("moe_block_add_rmsnorm", "the oracle: moe_block's and add_rmsnorm's reference variants composed, f32 on the host",
                                  [](VariantCtx& c, OpArgs& a) {
    const Registry& reg = Registry::get();
    OpArgs mb{{{"x", a.in("x")}}, {}, {{"k", a.param("k")}, {"n_experts", a.param("n_experts")}}};
    for (const char* w : {"router", "gate", "up", "down", "sgate", "sup", "sdown", "gate_w"}) mb.w.emplace(w, a.weight(w));
    reg.variant("moe_block", "reference").run(c, mb);
    OpArgs an{{{"x", a.in("res")}, {"a", mb.t.at("y")}}, {{"gain", a.weight("gain")}}, {{"eps", a.param("eps")}}};
    reg.variant("add_rmsnorm", "reference").run(c, an);
    a.set("y", an.t.at("y"));
    a.set("n", an.t.at("n"));
  }));
  register_moe_block_add_rmsnorm_vulkan(r);
}

}  // namespace hl::gpu
