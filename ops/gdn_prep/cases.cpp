// gdn_prep: its cases, at test, quick and full scale (inputs, shapes, the bytes and flops each must move and compute),
// which its tests and experiment run.
#include "ops/cases.h"

namespace hl::gpu {

namespace {

// gdn_prep's cases: the whole step from the projections to the scan's inputs (conv + silu, split, L2 norms of the
// 16 + 16 key heads, gates of the 32 value heads). Bytes: what one pass must move, x, b, a, taps, A, dt_bias read,
// the state read and written, q, k, v, beta, g written.
Case prep_case(int64_t T, int64_t nk, int64_t dk, int64_t nv, int64_t dv) {
  const int64_t C = 2 * nk * dk + nv * dv, K = 4;
  Case c;
  c.label = fmt::format("T={}{}", T, nk == 16 ? "" : fmt::format(" {} key heads of {}, {} value heads of {}", nk, dk, nv, dv));
  c.shape = {{"T", double(T)}, {"channels", double(C)}, {"kernel", double(K)}, {"value_heads", double(nv)}};
  // The conv and silu, 3 flops per q and k value for the norms (square, add, scale), ~20 per gate pair.
  c.cost = {4.0 * double(2 * T * C + 4 * T * nv + C * K + 2 * nv + 2 * (K - 1) * C),
            double(T * C * (2 * K + 4) + T * 2 * nk * dk * 3 + T * nv * 20)};
  c.inputs = [=](std::mt19937_64& g) {
    return OpArgs{{{"x", Tensor::from(randn(g, T, C))},
                   {"b", Tensor::from(randn(g, T, nv, 4.0))},
                   {"a", Tensor::from(randn(g, T, nv, 4.0))},
                   {"state", Tensor::from(randn(g, K - 1, C))}},
                  {{"w", weight("conv", randn(g, C, K, 0.3))},
                   {"A", weight("A", Mat<float>((-randn(g, 1, nv)).array().exp().matrix()))},
                   {"dt_bias", weight("dt_bias", randn(g, 1, nv))}},
                  {{"n_k_heads", double(nk)}, {"head_dim", double(dk)}, {"scale", 1 / std::sqrt(double(dk))}, {"eps", 1e-6}}};
  };
  return c;
}

std::vector<Case> cases(Scale s) {
  std::vector<Case> v;
  if (s == Scale::Test) {
    for (int64_t T : {1, 5, 21}) v.push_back(prep_case(T, 2, 64, 4, 64));
    v.push_back(prep_case(3, 1, 24, 2, 40));  // odd head widths
    v.push_back(prep_case(4, 16, 128, 32, 128));
    return v;
  }
  for (int64_t T : s == Scale::Quick ? std::vector<int64_t>{1, 64} : std::vector<int64_t>{1, 64, 512, 4096})
    v.push_back(prep_case(T, 16, 128, 32, 128));
  return v;
}
constexpr double kTolerance = 1e-6;  // the conv's, then one head's sum of squares and the gates' exp/softplus in f32

}  // namespace

OpDef gdn_prep_with_cases(OpDef d) {
  d.cases = cases;
  d.tolerance = kTolerance;

  return d;
}

}  // namespace hl::gpu
