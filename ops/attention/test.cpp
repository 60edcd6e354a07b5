// attention: the oracle's conventions, every variant against the reference on the op's cases (cases.cpp), and what is
// special about its kernels.
#include "ops/attention/reference.h"
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

namespace {

// Random q, k, v, gate for T tokens and caches of kv_len valid rows plus 3 rows of garbage capacity.
gpu::OpArgs attention_args(std::mt19937_64& g, int64_t T, int64_t kv_len, int64_t nq, int64_t nkv, int64_t D) {
  const double s = 1.0 / std::pow(double(D), 0.25);  // scores q.k / sqrt(D) ~ N(0, 1)
  const int64_t cap = kv_len + T + 3;
  return {{{"q", Tensor::from(randn(g, T, nq * D, s))},
           {"k", Tensor::from(randn(g, T, nkv * D, s))},
           {"v", Tensor::from(randn(g, T, nkv * D))},
           {"gate", Tensor::from(randn(g, T, nq * D, 2.0))},
           {"k_cache", Tensor::from(randn(g, cap, nkv * D, s))},
           {"v_cache", Tensor::from(randn(g, cap, nkv * D))}},
          {},
          {{"n_q_heads", nq}, {"n_kv_heads", nkv}, {"kv_len", kv_len}}};
}

}  // namespace

HL_TEST_EVERY_VARIANT("attention")

TEST_CASE("attention: GQA maps query head n to KV head n / group; causal; sigmoid gate", "[ops][attention]") {
  const int D = 4, T = 3;
  // q = 0 makes the softmax uniform over visible positions; v of KV head m at time tau is (m + 1) * (tau + 1).
  Mat<double> q = Mat<double>::Zero(T, 4 * D), k = Mat<double>::Zero(T, 2 * D), v(T, 2 * D), gate = Mat<double>::Zero(T, 4 * D);
  for (int t = 0; t < T; ++t)
    for (int m = 0; m < 2; ++m) v.block(t, m * D, 1, D).setConstant((m + 1) * (t + 1));
  gate(2, 3 * D) = 50;  // sigmoid(50) = 1 for one element
  ref::KvCache<double> cache;
  const Mat<double> o = ref::attention(q, k, v, gate, cache, 4, 2);
  for (int t = 0; t < T; ++t)
    for (int n = 0; n < 4; ++n) {
      const double mean = (n / 2 + 1) * (t + 2) / 2.0;  // mean of (m+1) * (1..t+1)
      CHECK(o(t, n * D + 1) == Approx(0.5 * mean));
    }
  CHECK(o(2, 3 * D) == Approx(2 * 2.0));
  CHECK(cache.len() == T);

  // The same tokens fed one at a time through the cache give the same outputs.
  ref::KvCache<double> c2;
  for (int t = 0; t < T; ++t) {
    const Mat<double> ot = ref::attention(Mat<double>(q.row(t)), Mat<double>(k.row(t)), Mat<double>(v.row(t)),
                                          Mat<double>(gate.row(t)), c2, 4, 2);
    CHECK(max_abs(ot, Mat<double>(o.row(t))) < 1e-14);
  }
}

// Tolerance 2e-6 relative L2: f32 dot products of D <= 256 terms and softmax-weighted sums over <= 512
// keys in another order than Eigen's, with online rescaling (each output a few roundings of 6e-8 times
// sqrt(terms)); measured ~1e-7. The caches' appended rows are copies: they must be exact.
TEST_CASE("vk ops: attention, every variant, T x kv_len x head dim x heads", "[vk][ops]") {
  std::mt19937_64 g(13);
  for (int64_t T : {1, 3, 17})
    for (int64_t kv_len : {0, 5, 300})
      for (int64_t D : {64, 256})
        for (auto [nq, nkv] : {std::pair{4, 2}, {16, 2}}) {
          const gpu::OpArgs a = attention_args(g, T, kv_len, nq, nkv, D);
          for (auto& v : vulkan_variants("attention")) {
            INFO(v << ": T " << T << ", kv_len " << kv_len << ", D " << D << ", heads " << nq << "/" << nkv);
            const auto e = compare_with_reference("attention", v, a);
            // f16 variants (cooperative matrices) declare their own bound.
            CHECK(e.at("o").rel_l2 <= std::max(2e-6, gpu::Registry::get().variant("attention", v).precision_tolerance));
            CHECK(e.at("o").finite);
            CHECK(e.at("k_cache").max_abs == 0);
            CHECK(e.at("v_cache").max_abs == 0);
          }
        }
}

TEST_CASE("vk ops: attention, real decode shape at context 512 and odd head dims", "[vk][ops]") {
  std::mt19937_64 g(14);
  // (T, kv_len, n_q, n_kv, D): decode at context 512 (16 q / 2 kv heads, D 256), a long decode that
  // needs many splits, head dims that are not multiples of the workgroup or key block, MHA.
  for (auto [T, kv_len, nq, nkv, D] : {std::tuple{1, 511, 16, 2, 256}, {1, 2000, 4, 2, 64}, {2, 40, 6, 3, 37},
                                       {1, 33, 2, 2, 300}, {4, 0, 2, 1, 1}})
    for (auto& v : vulkan_variants("attention")) {
      INFO(v << ": T " << T << ", kv_len " << kv_len << ", D " << D << ", heads " << nq << "/" << nkv);
      require_close("attention", v, attention_args(g, T, kv_len, nq, nkv, D), 2e-6);
    }
}

TEST_CASE("vk ops: attention, flash with its keys split over workgroups and merged", "[vk][ops]") {
  std::mt19937_64 g(15);
  const vk::ScopedTuning t(device().ctx().profile(), {{"attention.flash.max_keys", 32}});  // normally only past ~10^4 keys (lavapipe's loop limit)
  // (T, kv_len): rows whose later splits are empty (40 keys at most, rows t < 32 see one split), many splits.
  for (auto [T, kv_len] : {std::pair{40, 0}, {17, 300}})
    for (auto [nq, nkv, D] : {std::tuple{4, 2, 64}, {16, 2, 256}})
      require_close("attention", "vulkan:flash", attention_args(g, T, kv_len, nq, nkv, D), 2e-6);  // as above
}
