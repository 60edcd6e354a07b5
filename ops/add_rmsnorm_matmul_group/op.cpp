// add_rmsnorm_matmul_group: the residual add and norm in front of a layer's projections, s = x + a, y_i =
// (rmsnorm(s) * gain) w_i^T for two to four weights (the next layer's input norm, then its qkv, b, a, z or q, k, v). A
// composite op (parts: add_rmsnorm, matmul_group): with its reference variant the forward pass runs the parts, each as
// the plan picks it; its Vulkan variant folds the add and norm into the projections' dispatch in decode (README.md).
#include "ops/matmul_group/group.h"
#include "ops/registry.h"

namespace hl::gpu {

OpDef add_rmsnorm_matmul_group_with_cases(OpDef d);  // cases.cpp: its cases and tolerance
void register_add_rmsnorm_matmul_group_vulkan(Registry& r);  // vulkan.cpp

// matmul_group's arguments within this op's: the weights w0 .. w{n-1} without the gain, on input `x`.
OpArgs add_rmsnorm_matmul_group_projections(const OpArgs& a, const Tensor& x) {
  OpArgs g{{{"x", x}}, {}, {}};
  for (const auto& [n, w] : a.w)
    if (n != "gain") g.w.emplace(n, w);
  return g;
}

void register_add_rmsnorm_matmul_group(Registry& r) {
  OpDef d{"add_rmsnorm_matmul_group",
          "x [T, in] (the residual), a [T, in], gain [in], w_i [out_i, in] for i < n (2..4) -> s = x + a, "
          "y_i = (rmsnorm(s) * gain) w_i^T [T, out_i]",
          {"x", "a"}, {"gain", "w0", "w1", "w2", "w3"}, {}, {"s", "y0", "y1", "y2", "y3"}, {"eps"}, /*live=*/false,
          /*parts=*/{"add_rmsnorm", "matmul_group"}};
  d.optional_outputs = true;
  r.add_op(add_rmsnorm_matmul_group_with_cases(std::move(d)));
  // The parts' reference variants composed, as the unfused forward pass runs them.
  r.add_variant(reference_variant("add_rmsnorm_matmul_group",
                                  "the oracle: add_rmsnorm's and matmul_group's reference variants composed, f32 on the host",
                                  [](VariantCtx& c, OpArgs& a) {
    const Registry& reg = Registry::get();
    OpArgs an{{{"x", a.in("x")}, {"a", a.in("a")}}, {{"gain", a.weight("gain")}}, {{"eps", a.param("eps")}}};
    reg.variant("add_rmsnorm", "reference").run(c, an);
    OpArgs g = add_rmsnorm_matmul_group_projections(a, an.t.at("n"));
    reg.variant("matmul_group", "reference").run(c, g);
    a.set("s", an.t.at("y"));
    for (int i = 0; i < 4; ++i)
      if (g.t.count(fmt::format("y{}", i))) a.set(fmt::format("y{}", i), g.t.at(fmt::format("y{}", i)));
  }));
  register_add_rmsnorm_matmul_group_vulkan(r);
}

}  // namespace hl::gpu
