// gdn_decode: a Gated DeltaNet layer from its projections to the gated norm of the scan's output, for one decode
// token: gdn_prep (conv with the carried conv state, silu, split, q/k L2 norms, gates) then gdn_output (the delta-rule
// step with the carried state, the gated RMSNorm; with param norm = 0 the scan's output o, its norm left to the output
// projection, gated_rmsnorm_matmul). A composite op (parts: gdn_prep, gdn_output): with its reference
// variant the forward pass runs the parts, each as the plan picks it; its Vulkan variant runs the step in one dispatch
// (README.md).
#include "ops/registry.h"

namespace hl::gpu {

OpDef gdn_decode_with_cases(OpDef d);  // cases.cpp: its cases and tolerance
void register_gdn_decode_vulkan(Registry& r);  // vulkan.cpp

void register_gdn_decode(Registry& r) {
  r.add_op(gdn_decode_with_cases(
      {"gdn_decode",
       "x [T, C] = q | k | v projections, b, a [T, n_v], z [T, n_v*d_v]; conv w [C, K], A, dt_bias [n_v], gain [d_v]; "
       "conv_state [K-1, C], state [n_v, d_k*d_v] (carried) -> y = gdn_output(gdn_prep(x, b, a), z) [T, n_v*d_v] (norm = 0: "
       "y = ssm_scan(gdn_prep(x, b, a)), z and gain unread)",
       {"x", "b", "a", "z"}, {"w", "A", "dt_bias", "gain"}, {"conv_state", "state"}, {"y"},
       {"n_k_heads", "head_dim", "scale", "l2_eps", "tiled", "eps", "norm"}, /*live=*/false, /*parts=*/{"gdn_prep", "gdn_output"}}));
  // The parts' reference variants composed, as the unfused forward pass runs them (Forward::deltanet_block).
  r.add_variant(reference_variant("gdn_decode", "the oracle: gdn_prep's and gdn_output's reference variants composed, f32 on the host",
                                  [](VariantCtx& c, OpArgs& a) {
    const Registry& reg = Registry::get();
    OpArgs prep{{{"x", a.in("x")}, {"b", a.in("b")}, {"a", a.in("a")}, {"state", a.state("conv_state")}},
                {{"w", a.weight("w")}, {"A", a.weight("A")}, {"dt_bias", a.weight("dt_bias")}},
                {{"n_k_heads", a.param("n_k_heads")}, {"head_dim", a.param("head_dim")}, {"scale", a.param("scale")},
                 {"eps", a.param("l2_eps")}}};
    reg.variant("gdn_prep", "reference").run(c, prep);
    a.state("conv_state") = prep.t.at("state");
    if (a.param("norm") == 0) {  // the scan alone: gdn_output's first part
      OpArgs scan{{{"q", prep.t.at("q")}, {"k", prep.t.at("k")}, {"v", prep.t.at("v")}, {"beta", prep.t.at("beta")},
                   {"g", prep.t.at("g")}, {"state", a.state("state")}},
                  {},
                  {{"n_k_heads", a.param("n_k_heads")}, {"decode", 1.0}, {"chunk", 64.0}, {"tiled", a.param("tiled")}}};
      reg.variant("ssm_scan", "reference").run(c, scan);
      a.state("state") = scan.t.at("state");
      a.set("y", scan.t.at("o"));
      return;
    }
    OpArgs out{{{"q", prep.t.at("q")}, {"k", prep.t.at("k")}, {"v", prep.t.at("v")}, {"beta", prep.t.at("beta")},
                {"g", prep.t.at("g")}, {"z", a.in("z")}, {"state", a.state("state")}},
               {{"gain", a.weight("gain")}},
               {{"n_k_heads", a.param("n_k_heads")}, {"decode", 1.0}, {"chunk", 64.0}, {"tiled", a.param("tiled")},
                {"eps", a.param("eps")}}};
    reg.variant("gdn_output", "reference").run(c, out);
    a.state("state") = out.t.at("state");
    a.set("y", out.t.at("y"));
  }));
  register_gdn_decode_vulkan(r);
}

}  // namespace hl::gpu
