// add's Halide variants against the reference: every one on the op's cases, and sizes that are no multiple of a vector
// or a task.
#include "halide_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_HALIDE_VARIANT("add")

TEST_CASE("halide ops: add over odd sizes", "[halide][ops]") {
  std::mt19937_64 g(3);
  for (auto [r, c] : {std::pair{1, 1}, {1, 2048}, {3, 4099}, {17, 37}}) {
    gpu::OpArgs a{{{"a", Tensor::from(randn(g, r, c, 3.0))}, {"b", Tensor::from(randn(g, r, c))}}, {}, {}};
    INFO("[" << r << ", " << c << "]");
    check_all("add", a, 0);  // one f32 add per value: exact
  }
}
