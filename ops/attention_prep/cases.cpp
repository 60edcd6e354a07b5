// attention_prep: its cases, at test, quick and full scale (inputs, shapes, the bytes and flops each must move and
// compute), which its tests and the attention experiment run.
#include "ops/cases.h"

namespace hl::gpu {

namespace {

// A prompt chunk of T tokens from position pos0: n_q query / n_kv KV heads of D dims, R of them rotated. Inputs as the
// layer's projections give them (unit scale), gains around 1. Bytes: qg and k read, q, gate and k written, the gains;
// flops: the norms (3 per value) and the rotations (6 per rotated pair).
Case prep_case(int64_t T, int64_t pos0, int64_t nq, int64_t nkv, int64_t D, int64_t R) {
  Case c;
  c.label = fmt::format("prep T={}{}{}", T, pos0 ? fmt::format(" from {}", pos0) : "",
                        nq == 16 && nkv == 2 && D == 256 && R == 64 ? "" : fmt::format(", {} q / {} kv heads of {}, {} rotated", nq, nkv, D, R));
  c.group = "prep";
  c.shape = {{"T", double(T)}, {"q_heads", double(nq)}, {"kv_heads", double(nkv)}, {"head_dim", double(D)}};
  c.cost = {4.0 * double(T * (2 * nq * D + nkv * D) * 2 + 2 * D), double(T * (nq + nkv) * (3 * D + 3 * R))};
  c.inputs = [=](std::mt19937_64& g) {
    return OpArgs{{{"qg", Tensor::from(randn(g, T, 2 * nq * D))}, {"k", Tensor::from(randn(g, T, nkv * D))}},
                  {{"q_norm", weight("q_norm", randn(g, 1, D, 0.2, 1.0))}, {"k_norm", weight("k_norm", randn(g, 1, D, 0.2, 1.0))}},
                  {{"n_q_heads", double(nq)}, {"rot_dims", double(R)}, {"theta", 1e7}, {"pos0", double(pos0)}, {"eps", 1e-6}}};
  };
  return c;
}

std::vector<Case> cases(Scale s) {
  std::vector<Case> v;
  if (s == Scale::Test) {
    v.push_back(prep_case(1, 0, 16, 2, 256, 64));     // one token
    v.push_back(prep_case(37, 0, 16, 2, 256, 64));    // the model's heads
    v.push_back(prep_case(9, 200000, 16, 2, 256, 64)); // far positions (the angles' fixed-point reduction)
    v.push_back(prep_case(5, 3, 4, 2, 72, 24));       // odd head dim, partial rotation
    v.push_back(prep_case(6, 1, 2, 1, 48, 48));       // every dim rotated
    v.push_back(prep_case(4, 0, 3, 1, 40, 0));        // no rotation
    return v;
  }
  for (int64_t T : s == Scale::Quick ? std::vector<int64_t>{64} : std::vector<int64_t>{512, 4096})
    v.push_back(prep_case(T, 0, 16, 2, 256, 64));
  return v;
}

// rmsnorm in f32 with another summation order (~1e-6) and rope's angles by the same fixed-point reduction: rmsnorm's 1e-5.
constexpr double kTolerance = 1e-5;

}  // namespace

OpDef attention_prep_with_cases(OpDef d) {
  d.cases = cases;
  d.tolerance = kTolerance;
  return d;
}

}  // namespace hl::gpu
