// moe_block: a whole MoE block for the tokens given, router to output: the router's logits, its top-k routes,
// the routed experts and the gated shared expert, summed. A composite op (parts: matmul, moe_router, moe_experts,
// shared_expert): with its reference variant the forward pass runs the parts, each as the plan picks it; its
// Vulkan variant runs the block in three dispatches for decode (README.md).
#include "ops/registry.h"

namespace hl::gpu {

OpDef moe_block_with_cases(OpDef d);  // cases.cpp: its cases and tolerance
void register_moe_block_vulkan(Registry& r);  // vulkan.cpp

void register_moe_block(Registry& r) {
  r.add_op(moe_block_with_cases(
      {"moe_block",
       "x [T, H] -> routes = top-k(softmax(x router^T)); y = sum over routes of weight * expert(x) + sigmoid(x . gate_w) * "
       "shared(x); experts stacked: gate, up [E*F, H], down [E*H, F]; shared: sgate, sup [Fs, H], sdown [H, Fs]",
       {"x"}, {"router", "gate", "up", "down", "sgate", "sup", "sdown", "gate_w"}, {}, {"y"}, {"k", "n_experts"},
       /*live=*/false, /*parts=*/{"matmul", "moe_router", "moe_experts", "shared_expert"}}));
  // The parts' own reference variants composed, as the unfused forward pass runs them (routed + shared, then the
  // residual add outside).
  r.add_variant(reference_variant("moe_block", "the oracle: the parts' reference variants composed, f32 on the host",
                                  [](VariantCtx& c, OpArgs& a) {
    const Registry& reg = Registry::get();
    OpArgs mm{{{"x", a.in("x")}}, {{"w", a.weight("router")}}, {}};
    reg.variant("matmul", "reference").run(c, mm);
    OpArgs rt{{{"logits", mm.t.at("y")}}, {}, {{"k", a.param("k")}}};
    reg.variant("moe_router", "reference").run(c, rt);
    OpArgs ex{{{"x", a.in("x")}, {"expert", rt.t.at("expert")}, {"weight", rt.t.at("weight")}},
              {{"gate", a.weight("gate")}, {"up", a.weight("up")}, {"down", a.weight("down")}},
              {{"n_experts", a.param("n_experts")}}};
    reg.variant("moe_experts", "reference").run(c, ex);
    OpArgs sh{{{"x", a.in("x")}},
              {{"gate", a.weight("sgate")}, {"up", a.weight("sup")}, {"down", a.weight("sdown")}, {"gate_w", a.weight("gate_w")}},
              {}};
    reg.variant("shared_expert", "reference").run(c, sh);
    a.set("y", Tensor::from(Mat<float>(ex.t.at("y").f32() + sh.t.at("y").f32())));
  }));
  register_moe_block_vulkan(r);
}

}  // namespace hl::gpu
