// attention = vulkan:tiled against the reference on fresh random inputs: prompt chunks of several sizes over
// empty and filled caches, the tiny (D 64, 4/2 heads) and the real (D 256, 16/2 heads) head layouts, split
// key ranges, other tile shapes and odd head dims.
// Tolerance 2e-6 relative L2 (as for vulkan:flash): f32 dot products of D <= 300 terms (vec4 partial sums,
// then sequential) and softmax-weighted sums over <= 400 keys in blocks, with online rescaling, in another
// order than Eigen's: each output a few roundings of 6e-8 times sqrt(terms); measured ~1e-7. The caches'
// appended rows are copies: they must be exact.
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

namespace {

// Random q, k, v, gate for T tokens and caches of kv_len valid rows plus 3 rows of garbage capacity.
gpu::OpArgs args(std::mt19937_64& g, int64_t T, int64_t kv_len, int64_t nq, int64_t nkv, int64_t D) {
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

void check(const gpu::OpArgs& a) {
  const auto e = compare_with_reference("attention", "vulkan:tiled", a);
  INFO("o: rel L2 " << e.at("o").rel_l2 << ", max abs " << e.at("o").max_abs);
  CHECK(e.at("o").finite);
  CHECK(e.at("o").rel_l2 <= 2e-6);
  CHECK(e.at("k_cache").max_abs == 0);
  CHECK(e.at("v_cache").max_abs == 0);
}

}  // namespace

TEST_CASE("vk attention tiled: T x kv_len x head dim x heads", "[vk][ops]") {
  std::mt19937_64 g(31);
  for (int64_t T : {1, 3, 17, 64, 100})
    for (int64_t kv_len : {0, 5, 300})
      for (int64_t D : {64, 256})
        for (auto [nq, nkv] : {std::pair{4, 2}, {16, 2}}) {
          INFO("T " << T << ", kv_len " << kv_len << ", D " << D << ", heads " << nq << "/" << nkv);
          check(args(g, T, kv_len, nq, nkv, D));
        }
}

TEST_CASE("vk attention tiled: split key ranges, merged", "[vk][ops]") {
  std::mt19937_64 g(32);
  // max_keys 16: many splits, and tiles whose later splits are empty; min_groups: splits for idle devices.
  for (auto tuning : {std::map<std::string, uint32_t>{{"attention.tiled.max_keys", 16}},
                      {{"attention.tiled.min_groups", 1000}, {"attention.tiled.split_min_keys", 24}}}) {
    const vk::ScopedTuning t(device().ctx().profile(), tuning);
    for (auto [T, kv_len] : {std::pair{40, 0}, {17, 300}})
      for (auto [nq, nkv, D] : {std::tuple{4, 2, 64}, {16, 2, 256}}) {
        INFO("T " << T << ", kv_len " << kv_len << ", D " << D << ", heads " << nq << "/" << nkv);
        check(args(g, T, kv_len, nq, nkv, D));
      }
  }
}

TEST_CASE("vk attention tiled: other tiles, odd head dims, MHA", "[vk][ops]") {
  std::mt19937_64 g(33);
  // (rows, keys, wg): rows that split a GQA group, a tile smaller than a group, one key per step.
  for (auto [rows, keys, wg] : {std::tuple{5u, 4u, 32u}, {3u, 1u, 64u}, {64u, 16u, 128u}}) {
    const vk::ScopedTuning t(device().ctx().profile(),
                             {{"attention.tiled.rows", rows}, {"attention.tiled.keys", keys}, {"attention.tiled.wg", wg}});
    // (T, kv_len, n_q, n_kv, D): the real layout, head dims that are not multiples of 4 or of the workgroup,
    // a head dim that needs smaller tiles on lavapipe's 32 KB, MHA.
    for (auto [T, kv_len, nq, nkv, D] : {std::tuple{9, 30, 16, 2, 256}, {2, 40, 6, 3, 37}, {5, 33, 2, 2, 300},
                                         {4, 0, 2, 1, 1}, {7, 3, 3, 3, 64}}) {
      INFO("rows " << rows << ", keys " << keys << ", wg " << wg << ": T " << T << ", kv_len " << kv_len << ", D " << D
                   << ", heads " << nq << "/" << nkv);
      check(args(g, T, kv_len, nq, nkv, D));
    }
  }
}
