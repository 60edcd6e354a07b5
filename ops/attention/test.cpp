// Vulkan variants of slice, rope and attention against the reference, on fresh random inputs: odd shapes,
// the tiny model's and the real model's shapes.
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

TEST_CASE("vk ops: slice", "[vk][ops]") {
  std::mt19937_64 g(11);
  // (T, cols, period, offset, width): q|gate halves of the real q_proj (period 512), the GDN q|k|v split
  // (period = conv_dim), odd blocks, a whole-row copy.
  for (auto [T, cols, period, offset, width] : {std::tuple{3, 16 * 512, 512, 0, 256}, {3, 16 * 512, 512, 256, 256},
                                                {2, 8192, 8192, 2048, 2048}, {5, 7 * 13, 13, 4, 5}, {1, 10, 10, 0, 10}}) {
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, cols))}}, {},
                  {{"period", period}, {"offset", offset}, {"width", width}}};
    for (auto& v : vulkan_variants("slice")) require_close("slice", v, a, 0.0);  // a copy: exact
  }
}

TEST_CASE("vk ops: rope, small and large positions", "[vk][ops]") {
  std::mt19937_64 g(12);
  // Tolerance 1e-6 relative L2: the reference rounds cos/sin to f32 (3e-8 relative); the kernel's reduced
  // angle is a float in [-pi, pi] (rounding <= 1.2e-7 rad) and f32 sin/cos add ~1e-7. A plain f32 angle
  // p * inv_freq would be off by up to ~0.02 rad at p = 2e5.
  // (T, heads, D, R, pos0): real q and k (D 256, R 64), the tiny model (D 64, R 16), odd dims, R = D, R = 0.
  for (auto [T, heads, D, R, pos0] : {std::tuple{3, 16, 256, 64, 0}, {2, 2, 256, 64, 200000}, {1, 16, 256, 64, 262143},
                                      {17, 4, 64, 16, 5}, {5, 3, 10, 4, 7}, {2, 2, 8, 8, 100000}, {2, 2, 6, 0, 3}}) {
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, heads * D))}}, {},
                  {{"head_dim", D}, {"rot_dims", R}, {"theta", 1e7}, {"pos0", pos0}}};
    for (auto& v : vulkan_variants("rope")) require_close("rope", v, a, 1e-6);
  }
  // theta 1e4 turns the high frequencies faster: angles up to 2.6e5 rad at i = 0.
  gpu::OpArgs a{{{"x", Tensor::from(randn(g, 4, 2 * 128))}}, {},
                {{"head_dim", 128}, {"rot_dims", 128}, {"theta", 1e4}, {"pos0", 250000}}};
  for (auto& v : vulkan_variants("rope")) require_close("rope", v, a, 1e-6);
}

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
