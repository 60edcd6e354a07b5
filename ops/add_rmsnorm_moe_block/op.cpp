// add_rmsnorm_moe_block: the residual add and norm in front of a layer's MoE block (its post-attention norm), s = x + a,
// y = moe_block(rmsnorm(s) * gain). A composite op (parts: add_rmsnorm, moe_block): with its reference variant the
// forward pass runs the parts, each as the plan picks it; its Vulkan variant folds the add and norm into the block's
// first dispatch in decode (README.md).
#include "ops/registry.h"

namespace hl::gpu {

OpDef add_rmsnorm_moe_block_with_cases(OpDef d);  // cases.cpp: its cases and tolerance
void register_add_rmsnorm_moe_block_vulkan(Registry& r);  // vulkan.cpp

// moe_block's arguments within this op's: its weights and parameters, on input `x`.
OpArgs add_rmsnorm_moe_block_block(const OpArgs& a, const Tensor& x) {
  OpArgs b{{{"x", x}}, {}, {{"k", a.param("k")}, {"n_experts", a.param("n_experts")}}};
  for (const char* w : {"router", "gate", "up", "down", "sgate", "sup", "sdown", "gate_w"}) b.w.emplace(w, a.weight(w));
  return b;
}

void register_add_rmsnorm_moe_block(Registry& r) {
  r.add_op(add_rmsnorm_moe_block_with_cases(
      {"add_rmsnorm_moe_block",
       "x [T, H] (the residual), a [T, H], gain [H], moe_block's weights -> s = x + a, y = moe_block(rmsnorm(s) * gain)",
       {"x", "a"}, {"gain", "router", "gate", "up", "down", "sgate", "sup", "sdown", "gate_w"}, {}, {"s", "y"},
       {"k", "n_experts", "eps"}, /*live=*/false, /*parts=*/{"add_rmsnorm", "moe_block"}}));
  // The parts' reference variants composed, as the unfused forward pass runs them.
  r.add_variant(reference_variant("add_rmsnorm_moe_block",
                                  "the oracle: add_rmsnorm's and moe_block's reference variants composed, f32 on the host",
                                  [](VariantCtx& c, OpArgs& a) {
    const Registry& reg = Registry::get();
    OpArgs an{{{"x", a.in("x")}, {"a", a.in("a")}}, {{"gain", a.weight("gain")}}, {{"eps", a.param("eps")}}};
    reg.variant("add_rmsnorm", "reference").run(c, an);
    OpArgs mb = add_rmsnorm_moe_block_block(a, an.t.at("n"));
    reg.variant("moe_block", "reference").run(c, mb);
    a.set("s", an.t.at("y"));
    a.set("y", mb.t.at("y"));
  }));
  register_add_rmsnorm_moe_block_vulkan(r);
}

}  // namespace hl::gpu
