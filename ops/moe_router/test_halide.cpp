// moe_router's Halide variants against the reference: every one on the op's cases (256 and 32 experts, exact ties),
// and odd shapes: k = 1 and k = E, a single token, an expert count that is no multiple of a vector or a block.
#include "halide_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_HALIDE_VARIANT("moe_router")

TEST_CASE("halide ops: moe_router, odd shapes and every k", "[halide][ops]") {
  std::mt19937_64 g(7);
  for (auto [T, E, k] : {std::tuple{1, 256, 8}, {3, 37, 1}, {2, 37, 37}, {9, 5, 3}}) {
    Mat<float> l = randn(g, T, E, 2.0);
    l(0, E - 1) = l(0, 0);  // an exact tie: the lower id first
    gpu::OpArgs a{{{"logits", Tensor::from(l)}}, {}, {{"k", double(k)}}};
    INFO("T " << T << ", E " << E << ", k " << k);
    check_all("moe_router", a, 1e-6);  // expert ids identical; weights a softmax of k values
  }
}
