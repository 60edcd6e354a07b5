// attention_decode: its cases, at test, quick and full scale (inputs, shapes, the bytes and flops each must move and
// compute), which its tests and the attention experiment run.
#include "ops/cases.h"

namespace hl::gpu {

namespace {

// One decode token after `past` cached tokens: n_q query / n_kv KV heads of D dims, R of them rotated. Inputs as the
// layer's projections give them (qg, k and v of unit scale), gains around 1, random cache rows. Bytes: qg, k, v, the
// gains, o, the new cache rows and every cached k/v row once; flops: 4 D per (query head, key) pair.
Case decode_case(int64_t past, int64_t nq, int64_t nkv, int64_t D, int64_t R) {
  Case c;
  c.label = fmt::format("decode ctx={}{}", past + 1, nq == 16 && nkv == 2 && D == 256 ? "" : fmt::format(", {} q / {} kv heads of {}, {} rotated", nq, nkv, D, R));
  c.group = "decode";
  c.shape = {{"context", double(past + 1)}, {"q_heads", double(nq)}, {"kv_heads", double(nkv)}, {"head_dim", double(D)}};
  c.cost = {4.0 * double(3 * nq * D + 2 * D + 4 * nkv * D + 2 * (past + 1) * nkv * D), 4.0 * double(D * nq * (past + 1))};
  c.inputs = [=](std::mt19937_64& g) {
    Mat<float> kc = Mat<float>::Zero(past + 1, nkv * D), vc = Mat<float>::Zero(past + 1, nkv * D);
    kc.topRows(past) = randn(g, past, nkv * D, 0.5);
    vc.topRows(past) = randn(g, past, nkv * D);
    return OpArgs{{{"qg", Tensor::from(randn(g, 1, 2 * nq * D))},
                   {"k", Tensor::from(randn(g, 1, nkv * D))},
                   {"v", Tensor::from(randn(g, 1, nkv * D))},
                   {"k_cache", Tensor::from(kc)},
                   {"v_cache", Tensor::from(vc)}},
                  {{"q_norm", weight("q_norm", randn(g, 1, D, 0.2, 1.0))}, {"k_norm", weight("k_norm", randn(g, 1, D, 0.2, 1.0))}},
                  {{"n_q_heads", double(nq)}, {"n_kv_heads", double(nkv)}, {"kv_len", double(past)}, {"rot_dims", double(R)},
                   {"theta", 1e7}, {"pos0", double(past)}, {"eps", 1e-6}}};
  };
  return c;
}

std::vector<Case> cases(Scale s) {
  std::vector<Case> v;
  if (s == Scale::Test) {
    v.push_back(decode_case(0, 16, 2, 256, 64));     // the first token: its own key only
    v.push_back(decode_case(39, 16, 2, 256, 64));    // the model's heads
    v.push_back(decode_case(300, 16, 2, 256, 64));   // keys split over workgroups
    v.push_back(decode_case(20, 4, 2, 72, 24));      // odd head dim, partial rotation
    v.push_back(decode_case(9, 2, 1, 48, 48));       // every dim rotated
    return v;
  }
  for (int64_t ctx : s == Scale::Quick ? std::vector<int64_t>{512} : std::vector<int64_t>{64, 512, 4096})
    v.push_back(decode_case(ctx - 1, s == Scale::Quick ? 4 : 16, 2, 256, 64));
  return v;
}

// rmsnorm, rope and attention in f32 with other summation orders (each ~1e-6, attention's bound 1e-5) and the angles
// of rope.comp (the same fixed-point reduction): the attention's 1e-5.
constexpr double kTolerance = 1e-5;

}  // namespace

OpDef attention_decode_with_cases(OpDef d) {
  d.cases = cases;
  d.tolerance = kTolerance;
  return d;
}

}  // namespace hl::gpu
