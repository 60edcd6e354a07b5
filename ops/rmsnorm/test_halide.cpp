// rmsnorm's Halide variants against the reference: every one on the op's cases, and the shapes and inputs that test
// what is special about its schedules.
#include "halide_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_HALIDE_VARIANT("rmsnorm")

TEST_CASE("halide ops: rmsnorm over rows and head groups", "[halide][ops]") {
  std::mt19937_64 g(2);
  for (auto [r, c, G] : {std::tuple{1, 2048, 2048}, {7, 2048, 2048}, {5, 16 * 256, 256}, {3, 130, 13}, {2, 37, 37}}) {
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, r, c, 3.0))}}, {{"gain", weight("gain", randn(g, 1, G, 0.2, 1.0))}}, {{"eps", 1e-6}}};
    INFO("x [" << r << ", " << c << "], G " << G);
    check_all("rmsnorm", a, 1e-6);
  }
}
