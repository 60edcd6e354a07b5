// gdn_prep's Vulkan variants (vulkan:fused, vulkan:unfused) against its reference, the separate ops composed
// (ssm_conv, slice, l2norm, ssm_gates): fresh random projections and a random carried-in conv state, every
// output and the updated state compared. Shapes: Qwen3.6's real heads (16 key heads x 128, 32 value heads x
// 128, kernel 4) at small T, the tiny model's, and odd ones (head widths and T no multiple of any tile).
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_VARIANT("gdn_prep")

namespace {

struct PrepShape {
  int nk, dk, nv, dv, K;
};

// Inputs as the forward pass makes them; a + dt_bias spans about [-40, 40] (softplus's whole range).
gpu::OpArgs prep_args(std::mt19937_64& g, const PrepShape& s, int T) {
  const int64_t C = 2 * s.nk * s.dk + s.nv * s.dv;
  return {{{"x", Tensor::from(randn(g, T, C))},
           {"b", Tensor::from(randn(g, T, s.nv, 4.0))},
           {"a", Tensor::from(randn(g, T, s.nv, 15.0))},
           {"state", Tensor::from(randn(g, s.K - 1, C))}},
          {{"w", weight("w", randn(g, C, s.K, 0.5))},
           {"A", weight("A", Mat<float>((-randn(g, 1, s.nv)).array().exp().matrix()))},
           {"dt_bias", weight("dt_bias", randn(g, 1, s.nv))}},
          {{"n_k_heads", s.nk}, {"head_dim", s.dk}, {"scale", 1 / std::sqrt(double(s.dk))}, {"eps", 1e-6}}};
}

void require_all_close(const gpu::OpArgs& a, double tol) {
  const auto variants = vulkan_variants("gdn_prep");
  REQUIRE(variants.size() == 2);
  for (auto& v : variants) require_close("gdn_prep", v, a, tol);
}

}  // namespace

// Tolerance: each output is a short f32 expression of its inputs (a K-tap sum and a silu, then one head's
// sum of squares of at most 128 terms; exp/sigmoid/softplus for the gates), the same as the separate ops':
// relative L2 1e-6 (exp() may err by a few ulp). The state is copied exactly.
TEST_CASE("vk ops: gdn_prep, real head shapes, carried state", "[vk][ops][gdn_prep]") {
  std::mt19937_64 g(21);
  for (int T : {1, 2, 19}) {  // decode; fewer tokens than K-1 (the new state keeps old rows); past one token block
    INFO("T " << T);
    require_all_close(prep_args(g, {16, 128, 32, 128, 4}, T), 1e-6);
  }
}

TEST_CASE("vk ops: gdn_prep, tiny-model and odd shapes", "[vk][ops][gdn_prep]") {
  std::mt19937_64 g(22);
  for (auto s : {PrepShape{2, 32, 4, 32, 4}, {3, 13, 5, 7, 4}, {1, 40, 2, 96, 3}, {2, 8, 3, 200, 2}})
    for (int T : {1, 3, 37}) {
      INFO("nk " << s.nk << " x " << s.dk << ", nv " << s.nv << " x " << s.dv << ", K " << s.K << ", T " << T);
      require_all_close(prep_args(g, s, T), 1e-6);
    }
}

TEST_CASE("vk ops: gdn_prep under other tunings", "[vk][ops][gdn_prep]") {
  auto& prof = device().ctx().profile();
  std::mt19937_64 g(23);
  // Fewer invocations than a head's channels, one-invocation sums, the K-1 minimum of tokens per block,
  // sums wider than a subgroup (shared-memory path).
  for (auto [wg, tokens, group] : {std::tuple{32u, 3u, 1u}, {256u, 5u, 64u}, {64u, 64u, 8u}}) {
    INFO("wg " << wg << ", tokens " << tokens << ", group " << group);
    const vk::ScopedTuning scope(prof, {{"gdn_prep.fused.wg", wg}, {"gdn_prep.fused.tokens", tokens}, {"gdn_prep.fused.group", group}});
    require_close("gdn_prep", "vulkan:fused", prep_args(g, {2, 128, 4, 64, 4}, 23), 1e-6);
  }
}

TEST_CASE("vk ops: gdn_prep over a prompt in chunks then decode steps equals one call", "[vk][ops][gdn_prep]") {
  std::mt19937_64 g(24);
  const PrepShape s{2, 32, 4, 32, 4};
  const int T = 21;
  gpu::OpArgs whole = prep_args(g, s, T);
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  const auto& fused = gpu::Registry::get().variant("gdn_prep", "vulkan:fused");
  gpu::OpArgs one = whole;
  for (auto& [n, t] : one.t) t = t.clone();
  fused.run(ctx, one);
  Tensor state = whole.in("state").clone();
  int64_t t0 = 0;
  for (int64_t n : {9, 10, 1, 1}) {  // the carried state across calls, prefill chunks and decode steps
    gpu::OpArgs part = whole;
    for (const char* name : {"x", "b", "a"}) part.t[name] = Tensor::from(whole.in(name).f32().middleRows(t0, n));
    part.t["state"] = state;
    fused.run(ctx, part);
    for (const char* name : {"q", "k", "v", "beta", "g"}) {
      INFO(name << " rows " << t0 << " + " << n);
      CHECK(rel_l2(part.in(name).f32(), Mat<float>(one.in(name).f32().middleRows(t0, n))) <= 1e-6);
    }
    t0 += n;
  }
  CHECK(rel_l2(state.f32(), one.in("state").f32()) == 0);
  require_no_validation_messages();
}

TEST_CASE("vk ops: gdn_prep rejects inconsistent shapes", "[vk][ops][gdn_prep]") {
  std::mt19937_64 g(25);
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  for (const char* v : {"vulkan:fused", "vulkan:unfused", "reference"}) {
    INFO(v);
    const auto& var = gpu::Registry::get().variant("gdn_prep", v);
    gpu::OpArgs a = prep_args(g, {2, 32, 4, 32, 4}, 3);
    a.p["head_dim"] = 96;  // 2 x 2 x 96 = 384 of 256 channels: no value channels left
    CHECK_THROWS_WITH(var.run(ctx, a), Catch::Contains("gdn_prep"));
    if (std::string(v) != "reference") {
      gpu::OpArgs b = prep_args(g, {2, 32, 4, 32, 4}, 3);
      b.t["state"] = Tensor::from(randn(g, 2, 256));  // K-1 = 3 rows expected
      CHECK_THROWS_WITH(var.run(ctx, b), Catch::Contains("gdn_prep") && Catch::Contains("state [2, 256]"));
    }
  }
}
