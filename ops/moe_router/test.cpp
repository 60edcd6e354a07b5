// moe_router: the oracle's conventions, every variant against the reference on the op's cases (cases.cpp), and what is
// special about its kernels.
#include "ops/moe_router/reference.h"
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_VARIANT("moe_router")

TEST_CASE("moe_router: softmax over all experts, top-k, renormalised; ties keep the lower id", "[ops][router]") {
  Mat<double> logits(2, 4);
  logits << std::log(1.0), std::log(2.0), std::log(3.0), std::log(4.0),  // p = .1 .2 .3 .4
      0.5, 0.5, 0.5, 0.5;
  const auto r = ref::moe_router(logits, 2);
  CHECK(r.expert(0, 0) == 3);
  CHECK(r.expert(0, 1) == 2);
  CHECK(r.weight(0, 0) == Approx(4.0 / 7));
  CHECK(r.weight(0, 1) == Approx(3.0 / 7));
  CHECK(r.expert(1, 0) == 0);
  CHECK(r.expert(1, 1) == 1);
  CHECK(r.weight(1, 0) == Approx(0.5));
}

TEST_CASE("vk ops: moe_router, random and exactly tied logits", "[vk][ops]") {
  std::mt19937_64 g(12);
  for (int E : {8, 256})
    for (int k : {2, 8})
      for (int T : {1, 5, 64}) {
        Mat<float> random = randn(g, T, E, 2.0);
        // Logits on a coarse grid (multiples of 0.5 in [-2, 2]): many exact ties, also at the top-k cut.
        Mat<float> tied = randn(g, T, E).unaryExpr([](float v) { return std::round(std::clamp(v, -2.f, 2.f) * 2) / 2; });
        tied.row(0).setConstant(0.25f);  // every expert tied: ids 0..k-1
        for (const Mat<float>* l : {&random, &tied}) {
          gpu::OpArgs a{{{"logits", Tensor::from(*l)}}, {}, {{"k", k}}};
          for (auto& v : vulkan_variants("moe_router")) require_close("moe_router", v, a, 1e-6);
        }
      }
}

// Non-finite logits (a NaN weight upstream) give NaN weights, never finite routes: the model's NaN check must see them.
TEST_CASE("vk ops: moe_router, a token's NaN logit makes its weights NaN", "[vk][ops]") {
  std::mt19937_64 g(13);
  Mat<float> l = randn(g, 3, 256, 2.0);
  l(1, 17) = std::numeric_limits<float>::quiet_NaN();
  for (auto& name : vulkan_variants("moe_router")) {
    INFO(name);
    gpu::WeightStore ws(&device());
    gpu::VariantCtx ctx{&device(), &ws};
    gpu::OpArgs a{{{"logits", Tensor::from(l)}}, {}, {{"k", 8}}};
    gpu::Registry::get().variant("moe_router", name).run(ctx, a);
    const Mat<float> w = a.t.at("weight").f32();
    for (int j = 0; j < 8; ++j) {
      CHECK(std::isnan(w(1, j)));
      CHECK(std::isfinite(w(0, j)));
      CHECK(std::isfinite(w(2, j)));
    }
  }
}
