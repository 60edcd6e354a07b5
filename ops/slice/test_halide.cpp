// slice's Halide variants against the reference: every one on the op's cases, and blocks, offsets and widths that are
// no multiple of a vector.
#include "halide_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_HALIDE_VARIANT("slice")

TEST_CASE("halide ops: slice of blocks at odd offsets and widths", "[halide][ops]") {
  std::mt19937_64 g(7);
  for (auto [T, n, period, offset, width] : {std::tuple{1, 16, 512, 256, 256}, {3, 4, 37, 5, 11}, {2, 1, 9, 0, 9}, {5, 3, 20, 19, 1}}) {
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, n * period))}}, {}, {{"period", double(period)}, {"offset", double(offset)}, {"width", double(width)}}};
    INFO("T " << T << ", " << n << " blocks of " << period << ", [" << offset << ", " << offset + width << ")");
    check_all("slice", a, 0);  // a copy: exact
  }
}
