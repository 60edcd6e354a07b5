// moe_experts: the oracle's conventions, every variant against the reference on the op's cases, and the tiny and
// wide routes. Tolerance: f32 dot products over H (up to 2048 terms) and F (up to 512) summed in another order than
// Eigen, the router weight applied before down instead of after: ~3e-6 worst case per value, far less in relative
// L2 over a whole output, so 2e-6.
#include "ops/moe_experts/reference.h"
#include "ops/shared_expert/reference.h"
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

namespace {

Tensor ids(const std::vector<int32_t>& v, int64_t rows, int64_t cols) {
  IMat m(rows, cols);
  std::copy(v.begin(), v.end(), m.data());
  return Tensor::from_i32(std::move(m));
}

}  // namespace

HL_TEST_EVERY_VARIANT("moe_experts")

TEST_CASE("moe_experts and shared_expert: weighted SwiGLU experts, sigmoid-gated shared expert", "[ops][moe]") {
  std::mt19937_64 g(3);
  const int H = 6, F = 4, T = 3;
  std::vector<ref::ExpertMats<double>> ex;
  for (int e = 0; e < 3; ++e)
    ex.push_back({test::randn<double>(g, F, H), test::randn<double>(g, F, H), test::randn<double>(g, H, F)});
  const Mat<double> x = test::randn<double>(g, T, H);
  ref::Routes<double> r{IMat(T, 2), Mat<double>(T, 2)};
  r.expert << 0, 2, 2, 0, 1, 2;  // expert 1 only for token 2
  r.weight << 0.7, 0.3, 0.6, 0.4, 0.9, 0.1;
  const Mat<double> y = ref::moe_experts(x, r, {&ex[0], &ex[1], &ex[2]});
  for (int t = 0; t < T; ++t) {
    Mat<double> want = Mat<double>::Zero(1, H);
    for (int j = 0; j < 2; ++j) {
      const auto& e = ex[size_t(r.expert(t, j))];
      const Mat<double> xt = x.row(t);
      const Mat<double> hmid = (xt * e.gate.transpose()).unaryExpr([](double v) { return silu(v); }).cwiseProduct(xt * e.up.transpose());
      want += r.weight(t, j) * hmid * e.down.transpose();
    }
    CHECK(max_abs(Mat<double>(y.row(t)), want) < 1e-12);
  }
  // An expert nobody routes to may be absent.
  ref::Routes<double> r0{IMat::Zero(T, 1), Mat<double>::Ones(T, 1)};
  CHECK_NOTHROW(ref::moe_experts(x, r0, {&ex[0], nullptr, nullptr}));
  CHECK_THROWS_WITH(ref::moe_experts(x, r, {&ex[0], nullptr, &ex[2]}), Catch::Contains("expert 1"));

  const Vec<double> zero_gate = Vec<double>::Zero(H);
  CHECK(max_abs(ref::shared_expert(x, ex[0], zero_gate), Mat<double>(0.5 * ref::expert_mlp(x, ex[0]))) < 1e-14);
}

TEST_CASE("vk ops: moe_experts, tiny and wide routes", "[vk][ops]") {
  std::mt19937_64 g(13);
  for (auto [E, k, H, F] : {std::tuple{8, 2, 128, 48}, {16, 8, 256, 64}})
    for (int T : {1, 6, 33}) {
      // Expert 0 is in every token's route, expert E-1 in none; the other slots are distinct random experts.
      std::vector<int32_t> route;
      for (int t = 0; t < T; ++t) {
        std::vector<int32_t> e(static_cast<size_t>(E - 2));
        std::iota(e.begin(), e.end(), 1);
        std::shuffle(e.begin(), e.end(), g);
        e.resize(size_t(k));
        e[size_t(g() % uint64_t(k))] = 0;
        route.insert(route.end(), e.begin(), e.end());
      }
      Mat<float> w = randn(g, T, k).cwiseAbs();
      w = (w.array().colwise() / w.rowwise().sum().array()).matrix();  // router weights: positive, each row sums to 1
      gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, H))}, {"expert", ids(route, T, k)}, {"weight", Tensor::from(w)}},
                    {{"gate", weight("gate", randn(g, E * F, H, 1.0 / std::sqrt(H)))},
                     {"up", weight("up", randn(g, E * F, H, 1.0 / std::sqrt(H)))},
                     {"down", weight("down", randn(g, E * H, F, 1.0 / std::sqrt(F)))}},
                    {{"n_experts", E}}};
      // Each variant as the plan runs it (the quantized GEMMs take whole 64-value steps: F = 48 goes to route_pack's own).
      for (auto& v : vulkan_variants("moe_experts")) require_close("moe_experts", resolved("moe_experts", v, a), a, 2e-6);
    }
}
