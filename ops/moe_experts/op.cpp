// moe_experts: the routed SwiGLU experts, each token's k outputs summed with their router weights.
// The op's signature, its reference variant and its Vulkan variants (README.md lists them).
#include "ops/moe_experts/reference.h"
#include "ops/registry.h"

namespace hl::gpu {

OpDef moe_experts_with_cases(OpDef d);  // cases.cpp: its cases, tolerance and goldens
void register_moe_experts_vulkan(Registry& r);  // vulkan.cpp
void register_moe_experts_vulkan_route_pack(Registry& r);  // vulkan_route_pack.cpp
void register_moe_experts_vulkan_route_warp(Registry& r);  // vulkan_route_warp.cpp

namespace {

ref::ExpertMats<float> expert_mats(WeightStore& ws, const WeightRef& g, const WeightRef& u, const WeightRef& d) {
  return {ws.host(g).f32(), ws.host(u).f32(), ws.host(d).f32()};
}

}  // namespace

void register_moe_experts(Registry& r) {
  r.add_op(moe_experts_with_cases({"moe_experts",
            "x [T, H], routes -> sum over slots of weight * down(silu(gate x) * up x); experts stacked: gate, up "
            "[E*F, H], down [E*H, F]",
            {"x", "expert", "weight"}, {"gate", "up", "down"}, {}, {"y"}, {"n_experts"}}));
  r.add_variant(reference_variant("moe_experts", "the oracle (ops/moe_experts/reference.h), f32 on the host", [](VariantCtx& c, OpArgs& a) {  // the oracle, materialising only routed experts
    // Only the experts some token routes to are materialised, one row block each.
    const int E = int(a.iparam("n_experts"));
    const ref::Routes<float> routes{a.in("expert").i32(), a.in("weight").f32()};
    const WeightRef &g = a.weight("gate"), &u = a.weight("up"), &d = a.weight("down");
    const int64_t F = g.rows / E, H = d.rows / E;
    std::vector<std::unique_ptr<ref::ExpertMats<float>>> hold(static_cast<size_t>(E));
    std::vector<const ref::ExpertMats<float>*> ptr(size_t(E), nullptr);
    for (int64_t i = 0; i < routes.expert.size(); ++i) {
      const int e = routes.expert.data()[i];
      if (e < 0 || e >= E) fail("moe_experts: expert id {} outside [0, {})", e, E);
      if (!hold[size_t(e)])
        ptr[size_t(e)] = (hold[size_t(e)] = std::make_unique<ref::ExpertMats<float>>(expert_mats(
                              *c.weights, g.slice_rows(e * F, F), u.slice_rows(e * F, F), d.slice_rows(e * H, H))))
                             .get();
    }
    a.set("y", Tensor::from(ref::moe_experts(a.in("x").f32(), routes, ptr)));
  }));
  register_moe_experts_vulkan(r);
  register_moe_experts_vulkan_route_pack(r);
  register_moe_experts_vulkan_route_warp(r);
}

}  // namespace hl::gpu
