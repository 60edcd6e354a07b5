// gated_rmsnorm_matmul: the Gated DeltaNet's output norm in front of its output projection, y = (o / rms(o) * gain *
// silu(z) per value head) w^T. A composite op (parts: gated_rmsnorm, matmul): with its reference variant the forward
// pass runs the parts, each as the plan picks it; its Vulkan variant folds the norm into the projection's mat-vec in
// decode, which lets gdn_decode leave the norm out of its step (README.md).
#include "ops/registry.h"

namespace hl::gpu {

OpDef gated_rmsnorm_matmul_with_cases(OpDef d);  // cases.cpp: its cases and tolerance
void register_gated_rmsnorm_matmul_vulkan(Registry& r);  // vulkan.cpp

void register_gated_rmsnorm_matmul(Registry& r) {
  r.add_op(gated_rmsnorm_matmul_with_cases(
      {"gated_rmsnorm_matmul",
       "o, z [T, n_v*d_v], gain [d_v], w [out, n_v*d_v] -> y = gated_rmsnorm(o, z, gain) w^T [T, out]",
       {"o", "z"}, {"gain", "w"}, {}, {"y"}, {"eps"}, /*live=*/false, /*parts=*/{"gated_rmsnorm", "matmul"}}));
  // The parts' reference variants composed, as the unfused forward pass runs them.
  r.add_variant(reference_variant("gated_rmsnorm_matmul",
                                  "the oracle: gated_rmsnorm's and matmul's reference variants composed, f32 on the host",
                                  [](VariantCtx& c, OpArgs& a) {
    const Registry& reg = Registry::get();
    OpArgs n{{{"o", a.in("o")}, {"z", a.in("z")}}, {{"gain", a.weight("gain")}}, {{"eps", a.param("eps")}}};
    reg.variant("gated_rmsnorm", "reference").run(c, n);
    OpArgs m{{{"x", n.t.at("y")}}, {{"w", a.weight("w")}}, {}};
    reg.variant("matmul", "reference").run(c, m);
    a.set("y", m.t.at("y"));
  }));
  register_gated_rmsnorm_matmul_vulkan(r);
}

}  // namespace hl::gpu
