// gdn_decode: a Gated DeltaNet layer from its projections to the gated norm of the scan's output, for one decode
// token: gdn_prep (conv with the carried conv state, silu, split, q/k L2 norms, gates) then gdn_output (the delta-rule
// step with the carried state, the gated RMSNorm; with param norm = 0 the gate alone, o * gain * silu(z), and each head's
// sums of squares of o over `parts` column blocks, the norm's 1 / rms left to the output projection, rms_scaled_matmul).
// A composite op (parts: gdn_prep, gdn_output): with its reference
// variant the forward pass runs the parts, each as the plan picks it; its Vulkan variant runs the step in one dispatch
// (README.md).
#include "ops/registry.h"

namespace hl::gpu {

OpDef gdn_decode_with_cases(OpDef d);  // cases.cpp: its cases and tolerance
void register_gdn_decode_vulkan(Registry& r);  // vulkan.cpp

namespace {

// norm = 0's outputs from the scan's o [T, n*d] and the gate z: y = o * gain * silu(z) per head (gain [d]), and the sums of
// o^2 over each head's `parts` equal column blocks [T, n * parts].
std::pair<Mat<float>, Mat<float>> gated_unnormed(const Mat<float>& o, const Mat<float>& z, const Vec<float>& gain, int64_t parts) {
  const int64_t d = gain.size(), n = d > 0 ? o.cols() / d : 0;
  if (d == 0 || o.cols() != n * d || z.rows() != o.rows() || z.cols() != o.cols() || parts <= 0 || d % parts)
    fail("gdn_decode: o [{}, {}], z [{}, {}] and gain [{}] in {} parts per head do not fit", o.rows(), o.cols(), z.rows(),
         z.cols(), d, parts);
  Mat<float> y(o.rows(), o.cols()), ss(o.rows(), n * parts);
  for (int64_t t = 0; t < o.rows(); ++t)
    for (int64_t i = 0; i < o.cols(); ++i) y(t, i) = o(t, i) * gain(i % d) * (z(t, i) / (1.0f + std::exp(-z(t, i))));
  for (int64_t t = 0; t < o.rows(); ++t)
    for (int64_t b = 0; b < n * parts; ++b) ss(t, b) = o.row(t).segment(b * (d / parts), d / parts).squaredNorm();
  return {y, ss};
}

}  // namespace

void register_gdn_decode(Registry& r) {
  OpDef d{"gdn_decode",
       "x [T, C] = q | k | v projections, b, a [T, n_v], z [T, n_v*d_v]; conv w [C, K], A, dt_bias [n_v], gain [d_v]; "
       "conv_state [K-1, C], state [n_v, d_k*d_v] (carried) -> y = gdn_output(gdn_prep(x, b, a), z) [T, n_v*d_v] (norm = 0: "
       "o = ssm_scan(gdn_prep(x, b, a)), y = o * gain * silu(z) per head, sumsq [T, n_v*parts] = sum of o^2 over each of "
       "a head's parts equal column blocks)",
       {"x", "b", "a", "z"}, {"w", "A", "dt_bias", "gain"}, {"conv_state", "state"}, {"y", "sumsq"},
       {"n_k_heads", "head_dim", "scale", "l2_eps", "tiled", "eps", "norm", "parts"}, /*live=*/false,
       /*parts=*/{"gdn_prep", "gdn_output"}};
  d.optional_outputs = true;  // sumsq with norm = 0 only
  r.add_op(gdn_decode_with_cases(std::move(d)));
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
    if (a.param("norm") == 0) {  // the scan (gdn_output's first part), then the gate and the blocks' sums of squares
      OpArgs scan{{{"q", prep.t.at("q")}, {"k", prep.t.at("k")}, {"v", prep.t.at("v")}, {"beta", prep.t.at("beta")},
                   {"g", prep.t.at("g")}, {"state", a.state("state")}},
                  {},
                  {{"n_k_heads", a.param("n_k_heads")}, {"decode", 1.0}, {"chunk", 64.0}, {"tiled", a.param("tiled")}}};
      reg.variant("ssm_scan", "reference").run(c, scan);
      a.state("state") = scan.t.at("state");
      auto [y, ss] = gated_unnormed(scan.t.at("o").f32(), a.in("z").f32(), c.weights->host_vec(a.weight("gain")),
                                    a.iparam("parts"));
      a.set("y", Tensor::from(y));
      a.set("sumsq", Tensor::from(ss));
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
