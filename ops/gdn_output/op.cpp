// gdn_output: the Gated DeltaNet's output stage fused: the delta-rule scan (ssm_scan) and the gated RMSNorm of its
// output per value head (gated_rmsnorm). A composite op (parts: ssm_scan, gated_rmsnorm): with its reference variant
// the forward pass runs the parts, each as the plan picks it; its Vulkan variant runs both as one dispatch in decode
// (README.md).
#include "ops/registry.h"

namespace hl::gpu {

OpDef gdn_output_with_cases(OpDef d);  // cases.cpp: its cases and tolerance
void register_gdn_output_vulkan(Registry& r);  // vulkan.cpp

void register_gdn_output(Registry& r) {
  r.add_op(gdn_output_with_cases(
      {"gdn_output",
       "q, k [T, n_k*d_k], v, z [T, n_v*d_v], beta, g [T, n_v], state [n_v, d_k*d_v] (carried), gain [d_v] -> o = "
       "ssm_scan(q, k, v, beta, g); y = gated_rmsnorm(o, z, gain) per value head [T, n_v*d_v]",
       {"q", "k", "v", "beta", "g", "z"}, {"gain"}, {"state"}, {"y"}, {"n_k_heads", "decode", "chunk", "tiled", "eps"},
       /*live=*/false, /*parts=*/{"ssm_scan", "gated_rmsnorm"}}));
  // The parts' reference variants composed, as the unfused forward pass runs them.
  r.add_variant(reference_variant("gdn_output", "the oracle: ssm_scan's and gated_rmsnorm's reference variants composed, f32 on the host",
                                  [](VariantCtx& c, OpArgs& a) {
    const Registry& reg = Registry::get();
    OpArgs scan{{{"q", a.in("q")}, {"k", a.in("k")}, {"v", a.in("v")}, {"beta", a.in("beta")}, {"g", a.in("g")},
                 {"state", a.state("state")}},
                {},
                {{"n_k_heads", a.param("n_k_heads")}, {"decode", a.param("decode")}, {"chunk", a.param("chunk")},
                 {"tiled", a.param("tiled")}}};
    reg.variant("ssm_scan", "reference").run(c, scan);
    a.state("state") = scan.t.at("state");
    OpArgs norm{{{"o", scan.t.at("o")}, {"z", a.in("z")}}, {{"gain", a.weight("gain")}}, {{"eps", a.param("eps")}}};
    reg.variant("gated_rmsnorm", "reference").run(c, norm);
    a.set("y", norm.t.at("y"));
  }));
  register_gdn_output_vulkan(r);
}

}  // namespace hl::gpu
