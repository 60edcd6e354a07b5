// attention = vulkan:tiled against the reference on fresh random inputs: prompt chunks of several sizes over
// empty and filled caches, the tiny (D 64, 4/2 heads) and the real (D 256, 16/2 heads) head layouts, split
// key ranges, other tile shapes and odd head dims.
// Tolerance 2e-6 relative L2 (as for vulkan:flash): f32 dot products of D <= 300 terms (vec4 partial sums,
// then sequential) and softmax-weighted sums over <= 400 keys in blocks, with online rescaling, in another
// order than Eigen's: each output a few roundings of 6e-8 times sqrt(terms); measured ~1e-7. The caches'
// appended rows are copies: they must be exact.
// attention = vulkan:flash_coopmat (the same query tiles on cooperative matrices) on the same inputs, with its
// own tolerance: Q, K, V and P are rounded to f16 (unit roundoff u = 2^-11; each rounding a relative error of
// RMS u / sqrt(3) = 2.8e-4), the products summed in f32. A score s = q.k / sqrt(D) carries two roundings per
// term, independent over the D terms: an absolute error ~4e-4 |s|-sized (scores ~N(0, 1) here); p = exp(s - m)
// then is off by ~4e-4 relative, plus 2.8e-4 from its own rounding. The output is the p-weighted mean of the
// V rows, so independent weight errors of ~5e-4 move it by ~5e-4 of its own size whatever the number of keys,
// and V's rounding adds 2.8e-4: ~6e-4 relative L2 expected (l sums the rounded p that P V uses, so the
// normalisation adds nothing); the kernel's f32 softmax and accumulation add ~1e-6. Measured with emulated
// matrices (the same roundings): 2.1e-4 to 3.1e-4. Tolerance 2e-3 (the variant's precision_tolerance), while
// a flipped K layout gave 0.07-0.19 and skipped rescaling (margin 0) 0.03-0.04. Larger scores (real
// models' sharper attention) scale the first term with |s|.
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

// `variant` against the reference on `dev` (null: the tests' device), within 2e-6 or the variant's
// precision_tolerance; returns o's relative L2.
double check(const gpu::OpArgs& a, const std::string& variant = "vulkan:tiled", gpu::Device* dev = nullptr) {
  const auto e = compare_with_reference("attention", variant, a, dev);
  INFO(variant << " o: rel L2 " << e.at("o").rel_l2 << ", max abs " << e.at("o").max_abs);
  CHECK(e.at("o").finite);
  CHECK(e.at("o").rel_l2 <= std::max(2e-6, gpu::Registry::get().variant("attention", variant).precision_tolerance));
  CHECK(e.at("k_cache").max_abs == 0);
  CHECK(e.at("v_cache").max_abs == 0);
  return e.at("o").rel_l2;
}

// (T, kv_len, n_q, n_kv, D) of the cooperative-matrix cases: T = 2; 17 tokens (34 rows of a GQA pair: not a
// multiple of the 32-row tile) over an empty cache and after 30 cached tokens (a prefill chunk); the real
// layout (D 256, 16/2 heads) after cached tokens, with rows not a multiple of the tile.
constexpr std::tuple<int, int, int, int, int> kCoopmatCases[] = {
    {2, 0, 4, 2, 64}, {17, 0, 4, 2, 64}, {17, 30, 4, 2, 64}, {2, 5, 16, 2, 256}, {9, 30, 16, 2, 256}};

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
  // max_keys 16: many splits, and tiles whose later splits are empty; min_groups: splits for idle devices; merge_wg 8:
  // the merge's head dims in several passes of 4 per invocation.
  for (auto tuning : {std::map<std::string, uint32_t>{{"attention.tiled.max_keys", 16}},
                      {{"attention.tiled.min_groups", 1000}, {"attention.tiled.split_min_keys", 24}},
                      {{"attention.tiled.max_keys", 24}, {"attention.tiled.merge_wg", 8}}}) {
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

TEST_CASE("vk attention flash_coopmat: refused with a clear error where the device has no cooperative matrices", "[vk][ops]") {
  const std::string why = gpu::coopmat_unavailable(device(), false);
  if (why.empty()) return;  // the device has them: the tests below run the variant
  std::mt19937_64 g(34);
  gpu::OpArgs a = args(g, 5, 3, 4, 2, 64);
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  std::string msg;
  try {
    gpu::Registry::get().variant("attention", "vulkan:flash_coopmat").run(ctx, a);
  } catch (const std::exception& e) {
    msg = e.what();
  }
  CHECK_THAT(msg, Catch::Contains("flash_coopmat cannot run") && Catch::Contains(why));
  CHECK(!gpu::Registry::get().availability(gpu::Registry::get().variant("attention", "vulkan:flash_coopmat"), &device()).empty());
}

// The same kernel with emulated matrices (attention_flash_cm_emul.comp: HL_CM_EMULATE) on any device with
// f16 arithmetic (lavapipe in CI): checks the tiling, layouts, strides, masks and barriers of the real build.
TEST_CASE("vk attention flash_coopmat: emulated matrices", "[vk][ops]") {
  const vk::ScopedTuning emulate(device().ctx().profile(), {{"attention.flash_coopmat.cm_emulate", 1}});
  if (const std::string why = gpu::coopmat_unavailable(device(), true); !why.empty()) {
    WARN("SKIPPED: emulated cooperative matrices: " << device().info().name << ": " << why);
    return;
  }
  std::mt19937_64 g(35);
  for (auto [T, kv_len, nq, nkv, D] : kCoopmatCases) {
    INFO("T " << T << ", kv_len " << kv_len << ", D " << D << ", heads " << nq << "/" << nkv);
    const double e = check(args(g, T, kv_len, nq, nkv, D), "vulkan:flash_coopmat");
    WARN("emulated flash_coopmat rel L2 " << e << " (T " << T << ", kv_len " << kv_len << ", D " << D << ")");
  }
  // Other tiles: 16 x 16 with 6 subgroups (output blocks not a multiple of the subgroups; softmax rows split
  // over 48 / 16 = 3 invocations where the subgroups have 8, as on lavapipe); key splits merged
  // (max_keys 16: many, some empty for early rows); margin 0, so that every rise of a row's max rescales its
  // accumulators (with the default margin of 8 and these scores, only the first tile of a row does); the
  // cache rows converted to f16 first (f16_cache; the same roundings, so the same error); the V tile's loads issued
  // after the S products (early_v 0; the default 1 issues them with the K tile's), at the default tiles and at 16 x 16
  // with f16 cache rows and key splits.
  for (auto tuning : {std::map<std::string, uint32_t>{{"attention.flash_coopmat.rows", 16},
                                                      {"attention.flash_coopmat.keys", 16},
                                                      {"attention.flash_coopmat.subgroups", 6}},
                      {{"attention.flash_coopmat.max_keys", 16}},
                      {{"attention.flash_coopmat.margin", 0}, {"attention.flash_coopmat.keys", 16}},
                      {{"attention.flash_coopmat.f16_cache", 1}},
                      {{"attention.flash_coopmat.early_v", 0}},
                      {{"attention.flash_coopmat.early_v", 0}, {"attention.flash_coopmat.rows", 16},
                       {"attention.flash_coopmat.keys", 16}, {"attention.flash_coopmat.f16_cache", 1},
                       {"attention.flash_coopmat.max_keys", 48}}}) {
    const vk::ScopedTuning t(device().ctx().profile(), tuning);
    for (auto [T, kv_len, nq, nkv, D] : {std::tuple{17, 30, 4, 2, 64}, {5, 60, 16, 2, 256}}) {
      INFO("T " << T << ", kv_len " << kv_len << ", D " << D << ", heads " << nq << "/" << nkv);
      check(args(g, T, kv_len, nq, nkv, D), "vulkan:flash_coopmat");
    }
  }
}

// Real cooperative matrices, where the device has them (skipped with a message elsewhere): the cases above,
// longer chunks and contexts (256 queries over 2048 keys: the host reference takes seconds; the attention
// experiment checks 512 over 4096).
TEST_CASE("vk attention flash_coopmat: cooperative matrices", "[vk][ops][coopmat]") {
  gpu::Device* d = coopmat_or_skip("attention vulkan:flash_coopmat");
  if (!d) return;
  std::mt19937_64 g(36);
  std::vector<std::tuple<int, int, int, int, int>> cases(std::begin(kCoopmatCases), std::end(kCoopmatCases));
  cases.insert(cases.end(), {{100, 300, 16, 2, 256}, {64, 0, 16, 2, 256}, {256, 1792, 16, 2, 256}});
  for (auto [T, kv_len, nq, nkv, D] : cases) {
    INFO("T " << T << ", kv_len " << kv_len << ", D " << D << ", heads " << nq << "/" << nkv);
    const double e = check(args(g, T, kv_len, nq, nkv, D), "vulkan:flash_coopmat", d);
    WARN("flash_coopmat rel L2 " << e << " (T " << T << ", kv_len " << kv_len << ", D " << D << ")");
  }
}

// vulkan:flash_rows (16 query rows per subgroup, whole) on emulated matrices: the cases above (which append k, v and
// read this chunk's keys from them), then other shapes: two and three subgroups (32 and 48 rows per workgroup: row
// tiles that end inside a subgroup's rows, subgroups with no rows) with 16-key tiles, key splits merged (max_keys 16:
// many, some empty for a subgroup's early rows), margin 0 (every rise of a row's max rescales its accumulators) with
// the next tile's loads in flight (prefetch) and S in two chains. (Fewer than two subgroups of lavapipe's 8 lanes
// at head dim 256 take its compiler most of a minute: 256 unrolled loads per invocation.)
TEST_CASE("vk attention flash_rows: emulated matrices", "[vk][ops]") {
  const vk::ScopedTuning emulate(device().ctx().profile(), {{"attention.flash_rows.cm_emulate", 1}});
  if (const std::string why = gpu::coopmat_unavailable(device(), true); !why.empty()) {
    WARN("SKIPPED: emulated cooperative matrices: " << device().info().name << ": " << why);
    return;
  }
  std::mt19937_64 g(37);
  for (auto [T, kv_len, nq, nkv, D] : kCoopmatCases) {
    INFO("T " << T << ", kv_len " << kv_len << ", D " << D << ", heads " << nq << "/" << nkv);
    const double e = check(args(g, T, kv_len, nq, nkv, D), "vulkan:flash_rows");
    WARN("emulated flash_rows rel L2 " << e << " (T " << T << ", kv_len " << kv_len << ", D " << D << ")");
  }
  for (auto tuning : {std::map<std::string, uint32_t>{{"attention.flash_rows.subgroups", 2}, {"attention.flash_rows.keys", 16}},
                      {{"attention.flash_rows.subgroups", 3}, {"attention.flash_rows.keys", 16},
                       {"attention.flash_rows.max_keys", 16}},
                      {{"attention.flash_rows.margin", 0}, {"attention.flash_rows.prefetch", 1},
                       {"attention.flash_rows.s_chains", 2}}}) {
    const vk::ScopedTuning t(device().ctx().profile(), tuning);
    for (auto [T, kv_len, nq, nkv, D] : {std::tuple{17, 30, 4, 2, 64}, {5, 60, 16, 2, 256}}) {
      INFO("T " << T << ", kv_len " << kv_len << ", D " << D << ", heads " << nq << "/" << nkv);
      check(args(g, T, kv_len, nq, nkv, D), "vulkan:flash_rows");
    }
  }
}

// Real cooperative matrices, where the device has them: as flash_coopmat's cases, with the next tile's loads in
// flight too.
TEST_CASE("vk attention flash_rows: cooperative matrices", "[vk][ops][coopmat]") {
  gpu::Device* d = coopmat_or_skip("attention vulkan:flash_rows");
  if (!d) return;
  std::mt19937_64 g(38);
  std::vector<std::tuple<int, int, int, int, int>> cases(std::begin(kCoopmatCases), std::end(kCoopmatCases));
  cases.insert(cases.end(), {{100, 300, 16, 2, 256}, {64, 0, 16, 2, 256}, {256, 1792, 16, 2, 256}});
  for (uint32_t prefetch : {0u, 1u}) {
    const vk::ScopedTuning t(d->ctx().profile(), {{"attention.flash_rows.prefetch", prefetch}});
    for (auto [T, kv_len, nq, nkv, D] : cases) {
      INFO("prefetch " << prefetch << ": T " << T << ", kv_len " << kv_len << ", D " << D << ", heads " << nq << "/" << nkv);
      const double e = check(args(g, T, kv_len, nq, nkv, D), "vulkan:flash_rows", d);
      WARN("flash_rows rel L2 " << e << " (prefetch " << prefetch << ", T " << T << ", kv_len " << kv_len << ", D " << D << ")");
    }
  }
}
