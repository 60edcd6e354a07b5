// l2norm's Halide variants against the reference: every one on the op's cases, and head dims that are no multiple of
// a vector or a GPU block.
#include "halide_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_HALIDE_VARIANT("l2norm")

TEST_CASE("halide ops: l2norm over heads of several sizes, with a scale", "[halide][ops]") {
  std::mt19937_64 g(4);
  for (auto [r, heads, d] : {std::tuple{1, 16, 128}, {5, 3, 130}, {2, 4, 13}, {3, 1, 1}}) {
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, r, heads * d, 3.0))}}, {}, {{"head_dim", double(d)}, {"scale", 0.0883883}, {"eps", 1e-6}}};
    INFO("rows " << r << ", heads " << heads << " of " << d);
    check_all("l2norm", a, 1e-5);
  }
}
