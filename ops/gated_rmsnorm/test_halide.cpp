// gated_rmsnorm's Halide variants against the reference: every one on the op's cases, and the shapes and inputs that test
// what is special about its schedules.
#include "halide_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_HALIDE_VARIANT("gated_rmsnorm")

TEST_CASE("halide ops: gated_rmsnorm", "[halide][ops]") {
  std::mt19937_64 g(4);
  for (auto [T, n, d] : {std::tuple{1, 32, 128}, {9, 32, 128}, {3, 3, 37}}) {
    gpu::OpArgs a{{{"o", Tensor::from(randn(g, T, n * d, 2.0))}, {"z", Tensor::from(randn(g, T, n * d))}},
                  {{"gain", weight("gain", randn(g, 1, d, 0.2, 1.0))}},
                  {{"eps", 1e-6}}};
    INFO("T " << T << " heads " << n << " d " << d);
    check_all("gated_rmsnorm", a, 1e-6);
  }
}
