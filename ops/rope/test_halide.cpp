// rope's Halide variants against the reference: every one on the op's cases, and partial rotations, far positions and
// head dims that are no multiple of a vector.
#include "halide_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_HALIDE_VARIANT("rope")

TEST_CASE("halide ops: rope, partial rotary dims and far positions", "[halide][ops]") {
  std::mt19937_64 g(8);
  // (tokens, heads, D, rotated dims, first position)
  for (auto [T, heads, D, R, pos0] : {std::tuple{3, 16, 256, 64, 0}, {1, 2, 256, 64, 4095}, {5, 3, 12, 12, 7}, {2, 4, 10, 0, 3}, {4, 1, 6, 2, 100000}}) {
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, heads * D))}}, {},
                  {{"head_dim", double(D)}, {"rot_dims", double(R)}, {"theta", 1e7}, {"pos0", double(pos0)}}};
    INFO("T " << T << ", " << heads << " heads of " << D << ", " << R << " rotated, from position " << pos0);
    check_all("rope", a, 1e-6);
  }
}
