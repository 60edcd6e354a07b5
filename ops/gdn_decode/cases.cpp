// gdn_decode: its cases, at test, quick and full scale (inputs, shapes, the bytes and flops each must move and
// compute), which its tests and the ssm_scan experiment run.
#include "ops/cases.h"

namespace hl::gpu {

namespace {

// One decode token of a Gated DeltaNet layer: nk key heads of dk, nv value heads of dv, K = 4 conv taps; projections of
// unit scale, gates as the model's (A < 0), a carried conv state and a carried delta-rule state. Bytes: x, b, a, z, the
// taps, A, dt_bias, gain, both states read and written, y; flops: the conv's and the scan's ~7 dk dv per value head.
// parts > 0: norm = 0, the gate alone and each head's sums of squares over that many column blocks (the norm's 1 / rms left
// to the output projection).
Case decode_case(int64_t nk, int64_t dk, int64_t nv, int64_t dv, bool tiled, int64_t parts = 0) {
  const bool norm = parts == 0;
  const int64_t C = 2 * nk * dk + nv * dv, K = 4;
  Case c;
  c.label = fmt::format("T=1{}{}{}", nk == 16 && dk == 128 && nv == 32 && dv == 128 ? "" : fmt::format(" {} key heads of {}, {} value heads of {}", nk, dk, nv, dv),
                        tiled ? " tiled head order" : "", norm ? "" : fmt::format(" gate, sums of squares in {} parts", parts));
  c.group = "decode";
  c.shape = {{"key_heads", double(nk)}, {"value_heads", double(nv)}, {"d_k", double(dk)}, {"d_v", double(dv)}};
  c.cost = {4.0 * double(C + 2 * nv + nv * dv + C * K + 2 * nv + dv + 2 * (K - 1) * C + 2 * nv * dk * dv + nv * dv + nv * parts),
            double(C * 2 * K + 7 * nv * dk * dv)};
  c.inputs = [=](std::mt19937_64& g) {
    return OpArgs{{{"x", Tensor::from(randn(g, 1, C))},
                   {"b", Tensor::from(randn(g, 1, nv, 2.0))},
                   {"a", Tensor::from(randn(g, 1, nv, 2.0))},
                   {"z", Tensor::from(randn(g, 1, nv * dv))},
                   {"conv_state", Tensor::from(randn(g, K - 1, C))},
                   {"state", Tensor::from(randn(g, nv, dk * dv, 0.5))}},
                  {{"w", weight("conv", randn(g, C, K, 0.3))},
                   {"A", weight("A", Mat<float>(-(randn(g, 1, nv)).array().exp().matrix()))},
                   {"dt_bias", weight("dt_bias", randn(g, 1, nv))},
                   {"gain", weight("gain", randn(g, 1, dv, 0.1, 1.0))}},
                  {{"n_k_heads", double(nk)}, {"head_dim", double(dk)}, {"scale", 1 / std::sqrt(double(dk))}, {"l2_eps", 1e-6},
                   {"tiled", tiled ? 1.0 : 0.0}, {"eps", 1e-6}, {"norm", norm ? 1.0 : 0.0}, {"parts", double(parts)}}};
  };
  return c;
}

std::vector<Case> cases(Scale s) {
  std::vector<Case> v;
  if (s == Scale::Test) {
    v.push_back(decode_case(2, 128, 4, 128, false));  // the model's head shape, two value heads per key head
    v.push_back(decode_case(2, 48, 6, 40, true));     // odd head dims, three value heads per key head, GGUF's order
    v.push_back(decode_case(1, 32, 1, 64, false));    // one value head per key head
    v.push_back(decode_case(2, 128, 4, 128, false, 4));  // the norm left to the projection: 4 blocks per head
    v.push_back(decode_case(2, 48, 6, 40, true, 2));
    v.push_back(decode_case(1, 32, 1, 64, false, 1));
    return v;
  }
  const int64_t nk = s == Scale::Quick ? 2 : 16;
  v.push_back(decode_case(nk, 128, 2 * nk, 128, true));
  for (int64_t parts : {1, 2, 4, 8}) v.push_back(decode_case(nk, 128, 2 * nk, 128, true, parts));
  return v;
}

// gdn_prep's conv, norms and gates (1e-6) feeding gdn_output's scan and norm (1e-4).
constexpr double kTolerance = 1e-4;

}  // namespace

OpDef gdn_decode_with_cases(OpDef d) {
  d.cases = cases;
  d.tolerance = kTolerance;
  return d;
}

}  // namespace hl::gpu
