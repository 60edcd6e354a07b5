// moe_experts's Halide variants against the reference: every one on the op's cases, and the shapes and inputs that test
// what is special about its schedules.
#include "halide_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_HALIDE_VARIANT("moe_experts")

TEST_CASE("halide ops: moe_experts over packed expert-grouped rows", "[halide][ops]") {
  std::mt19937_64 g(9);
  // (T, E, k, H, F): odd sizes (T = 1, k = 3: 3 packed rows), most experts without a token, every expert with
  // every token (k = E), one expert, a wide reduction (the model's hidden 2048 and width 512). The tuned build on row
  // tiles of one expert: 7 rows per expert (tiles of 4, one padded row each, widths past the lanes), 20 rows on
  // average and uneven (tiles of 4, several tasks), 3 rows per expert (tiles of 2).
  for (auto [T, E, k, H, F] : {std::tuple{5, 8, 3, 37, 19}, {1, 8, 3, 37, 19}, {1, 8, 2, 16, 8}, {7, 4, 4, 37, 19},
                               {3, 1, 1, 5, 3}, {9, 32, 8, 256, 64}, {3, 2, 2, 2048, 512}, {40, 4, 2, 37, 19},
                               {3, 3, 3, 64, 40}}) {
    IMat ex(T, k);
    Mat<float> w(T, k);
    std::uniform_int_distribution<int> pick(0, E - 1);
    std::uniform_real_distribution<float> uw(0.05f, 1.0f);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t j = 0; j < k; ++j) {
        int e;
        do e = pick(g);
        while ((ex.row(t).head(j).array() == e).any());  // distinct experts per token, as top-k gives
        ex(t, j) = e;
        w(t, j) = uw(g);
      }
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, H))}, {"expert", Tensor::from_i32(ex)}, {"weight", Tensor::from(w)}},
                  {{"gate", weight("gate", randn(g, E * F, H, 1.0 / std::sqrt(H)))},
                   {"up", weight("up", randn(g, E * F, H, 1.0 / std::sqrt(H)))},
                   {"down", weight("down", randn(g, E * H, F, 1.0 / std::sqrt(F)))}},
                  {{"n_experts", double(E)}}};
    INFO("T " << T << " E " << E << " k " << k << " H " << H << " F " << F);
    // f32 sums of H and F products in another order than Eigen's: ~sqrt(H) ulps, 1.6e-6 measured at H = 2048.
    check_all("moe_experts", a, H >= 1024 ? 4e-6 : 2e-6);
  }
}
