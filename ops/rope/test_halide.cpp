// rope's Halide variants against the reference: every one on the op's cases, and partial rotations, far positions and
// head dims that are no multiple of a vector.
#include "halide_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_HALIDE_VARIANT("rope")

TEST_CASE("halide ops: rope, partial rotary dims and far positions", "[halide][ops]") {
  std::mt19937_64 g(8);
  // (tokens, heads, D, rotated dims, first position)
  for (auto [T, heads, D, R, pos0] : {std::tuple{3, 16, 256, 64, 0}, {1, 2, 256, 64, 4095}, {5, 3, 12, 12, 7}, {2, 4, 10, 0, 3}, {4, 1, 6, 2, 100000},
        // past the device's first tables: a window from 65536, one from 98304 that replaces it, then the first again
        {3, 2, 256, 64, 70000}, {2, 2, 256, 64, 131071}, {1, 16, 256, 64, 98303}, {2, 2, 256, 64, 70001}}) {
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, heads * D))}}, {},
                  {{"head_dim", double(D)}, {"rot_dims", double(R)}, {"theta", 1e7}, {"pos0", double(pos0)}}};
    INFO("T " << T << ", " << heads << " heads of " << D << ", " << R << " rotated, from position " << pos0);
    check_all("rope", a, 1e-6);
  }
}

TEST_CASE("halide ops: rope's device window of positions replaced when a call leaves it", "[halide][ops]") {
  std::mt19937_64 g(9);
  const auto args = [&](int T, int64_t pos0) {
    return gpu::OpArgs{{{"x", Tensor::from(randn(g, T, 2 * 256))}}, {},
                       {{"head_dim", 256.0}, {"rot_dims", 64.0}, {"theta", 1e7}, {"pos0", double(pos0)}}};
  };
  // (first call's position, second call's): a later window, an earlier one, and the first tables after a window
  for (auto [p1, p2] : {std::pair<int64_t, int64_t>{70000, 131071}, {131071, 70001}, {70000, 100}})
    for (auto& v : halide_variants("rope"))
      if (v.starts_with("halide-vulkan:")) {
        INFO(v << " at position " << p2 << " after " << p1);
        require_close_second_call("rope", v, args(2, p1), args(3, p2), 1e-6);
      }
}
