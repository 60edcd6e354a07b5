// ssm_conv's Halide variants against the reference: every one on the op's cases, and the shapes and inputs that test
// what is special about its schedules.
#include "halide_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_HALIDE_VARIANT("ssm_conv")

TEST_CASE("halide ops: ssm_conv with carried state", "[halide][ops]") {
  std::mt19937_64 g(6);
  for (auto [T, C] : {std::pair{1, 37}, {19, 100}, {2, 13}, {64, 8192}}) {
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, C))}, {"state", Tensor::from(randn(g, 3, C))}},
                  {{"w", weight("w", randn(g, C, 4, 0.5))}},
                  {}};
    INFO("T " << T << " C " << C);
    check_all("ssm_conv", a, 1e-6);
  }
}

// The CPU schedules at K != 4: the tuned one's general branch (its taps' buffer sized at run time, not the K = 4
// specialisation). gpu_tuned takes only K = 4 by design (a one-line error), so the CPU variants only.
TEST_CASE("halide ops: ssm_conv's CPU schedules at other kernel sizes", "[halide][ops]") {
  std::mt19937_64 g(7);
  for (auto [T, C, K] : {std::tuple{1, 37, 2}, {19, 100, 3}, {5, 64, 6}}) {
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, C))}, {"state", Tensor::from(randn(g, K - 1, C))}},
                  {{"w", weight("w", randn(g, C, K, 0.5))}},
                  {}};
    INFO("T " << T << " C " << C << " K " << K);
    check_all("ssm_conv", a, 1e-6, false);
  }
}
