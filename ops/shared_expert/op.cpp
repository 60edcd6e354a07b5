// shared_expert: the sigmoid-gated SwiGLU expert every token goes through.
// The op's signature, its reference variant and its Vulkan variants (README.md lists them).
#include "ops/shared_expert/reference.h"
#include "ops/registry.h"

namespace hl::gpu {

OpDef shared_expert_with_cases(OpDef d);  // cases.cpp: its cases, tolerance and goldens
void register_shared_expert_vulkan(Registry& r);  // vulkan.cpp

namespace {

ref::ExpertMats<float> expert_mats(WeightStore& ws, const WeightRef& g, const WeightRef& u, const WeightRef& d) {
  return {ws.host(g).f32(), ws.host(u).f32(), ws.host(d).f32()};
}

}  // namespace

void register_shared_expert(Registry& r) {
  r.add_op(shared_expert_with_cases({"shared_expert", "x [T, H] -> sigmoid(x . gate_w) * down(silu(gate x) * up x)", {"x"},
            {"gate", "up", "down", "gate_w"}, {}, {"y"}, {}}));
  r.add_variant(reference_variant("shared_expert", "the oracle (ops/shared_expert/reference.h), f32 on the host", [](VariantCtx& c, OpArgs& a) {
    a.set("y", Tensor::from(ref::shared_expert(a.in("x").f32(),
                                               expert_mats(*c.weights, a.weight("gate"), a.weight("up"), a.weight("down")),
                                               c.weights->host_vec(a.weight("gate_w")))));
  }));
  register_shared_expert_vulkan(r);
}

}  // namespace hl::gpu
