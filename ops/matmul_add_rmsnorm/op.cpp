// matmul_add_rmsnorm: a layer's output projection and the residual add and norm that follow it, y = x + h w^T and
// n = rmsnorm(y) * gain. A composite op (parts: matmul, add_rmsnorm): with its reference variant the forward pass runs
// the parts, each as the plan picks it; its Vulkan variant runs them as one dispatch in decode (README.md).
#include "ops/registry.h"

namespace hl::gpu {

OpDef matmul_add_rmsnorm_with_cases(OpDef d);  // cases.cpp: its cases and tolerance
void register_matmul_add_rmsnorm_vulkan(Registry& r);  // vulkan.cpp

void register_matmul_add_rmsnorm(Registry& r) {
  r.add_op(matmul_add_rmsnorm_with_cases(
      {"matmul_add_rmsnorm",
       "h [T, K], x [T, N], w [N, K], gain [N] -> y = x + h w^T (the residual stream), n = rmsnorm(y) * gain",
       {"h", "x"}, {"w", "gain"}, {}, {"y", "n"}, {"eps"}, /*live=*/false, /*parts=*/{"matmul", "add_rmsnorm"}}));
  // The parts' reference variants composed, as the unfused forward pass runs them.
  r.add_variant(reference_variant("matmul_add_rmsnorm", "the oracle: matmul's and add_rmsnorm's reference variants composed, f32 on the host",
                                  [](VariantCtx& c, OpArgs& a) {
    const Registry& reg = Registry::get();
    OpArgs mm{{{"x", a.in("h")}}, {{"w", a.weight("w")}}, {}};
    reg.variant("matmul", "reference").run(c, mm);
    OpArgs an{{{"x", a.in("x")}, {"a", mm.t.at("y")}}, {{"gain", a.weight("gain")}}, {{"eps", a.param("eps")}}};
    reg.variant("add_rmsnorm", "reference").run(c, an);
    a.set("y", an.t.at("y"));
    a.set("n", an.t.at("n"));
  }));
  register_matmul_add_rmsnorm_vulkan(r);
}

}  // namespace hl::gpu
