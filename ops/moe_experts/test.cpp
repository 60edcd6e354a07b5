// Vulkan variants of embed, moe_router, moe_experts and shared_expert against the reference, on fresh random
// inputs: the tiny model's shapes and the real model's widths where lavapipe's speed allows.
// Tolerances:
// - embed is a copy: exact.
// - moe_router: expert ids identical (also with exact ties); weights are p_e / sum of k, with p from an f32
//   exp (a few ulp, GLSL allows 3 + 2|x| ulp) and a softmax sum in another order: ~1e-7 relative, so 1e-6.
// - moe_experts, shared_expert: f32 dot products over H (up to 2048 terms) and F (up to 512 terms) summed in
//   another order (subgroup-strided partials, then a tree) than Eigen, plus the router weight applied before
//   down instead of after: rounding grows ~ sqrt(n) * 6e-8 per dot, ~3e-6 worst case per value and far less
//   in relative L2 over a whole output (errors are independent), so 2e-6.
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

TEST_CASE("vk ops: embed, tiny and real width", "[vk][ops]") {
  std::mt19937_64 g(11);
  for (auto [V, H, T] : {std::tuple{512, 128, 7}, {1000, 2048, 5}, {3, 5, 1}}) {
    std::vector<int32_t> tok(static_cast<size_t>(T));
    std::uniform_int_distribution<int32_t> d(0, V - 1);
    for (auto& t : tok) t = d(g);
    tok.front() = 0;
    tok.back() = V - 1;  // both ends of the table
    gpu::OpArgs a{{{"tokens", ids(tok, 1, T)}}, {{"table", weight("table", randn(g, V, H))}}, {}};
    for (auto& v : vulkan_variants("embed")) require_close("embed", v, a, 0.0);
  }
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
      for (auto& v : vulkan_variants("moe_experts")) require_close("moe_experts", v, a, 2e-6);
    }
}

TEST_CASE("vk ops: shared_expert, tiny and real width", "[vk][ops]") {
  std::mt19937_64 g(14);
  // T = 1: the per-token kernels; T >= shared_expert.fused.gemm_tokens: route_pack's grouped GEMM (37 tokens:
  // row tiles of 16 with a partial last one).
  for (auto [H, F] : {std::pair{128, 64}, {2048, 512}})
    for (int T : {1, 4, 37}) {
      gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, H))}},
                    {{"gate", weight("gate", randn(g, F, H, 1.0 / std::sqrt(H)))},
                     {"up", weight("up", randn(g, F, H, 1.0 / std::sqrt(H)))},
                     {"down", weight("down", randn(g, H, F, 1.0 / std::sqrt(F)))},
                     {"gate_w", weight("gate_w", randn(g, 1, H, 1.0 / std::sqrt(H)))}},
                    {}};
      for (auto& v : vulkan_variants("shared_expert")) require_close("shared_expert", v, a, 2e-6);
    }
}
