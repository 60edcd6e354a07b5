// matmul's Halide variants against the reference: every one on the op's cases, and the shapes and inputs that test
// what is special about its schedules.
#include "halide_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_HALIDE_VARIANT("matmul")
HL_TEST_EVERY_HALIDE_VARIANT("lm_head")

TEST_CASE("halide ops: matmul and lm_head, f32 weights, odd and real shapes", "[halide][ops]") {
  std::mt19937_64 g(3);
  for (auto [T, K, N] : {std::tuple{1, 37, 53}, {3, 100, 17}, {9, 64, 40}, {33, 129, 70}, {1, 2048, 512}, {20, 2048, 256}}) {
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, K))}}, {{"w", weight("w", randn(g, N, K, 1.0 / std::sqrt(K)))}}, {}};
    INFO("T " << T << " in " << K << " out " << N);
    for (const char* op : {"matmul", "lm_head"}) check_all(op, a, 2e-6);
  }
}

TEST_CASE("halide ops: matmul on Q8_0 weights, decoded in the pipeline", "[halide][ops]") {
  std::mt19937_64 g(5);
  for (auto [T, K, N] : {std::tuple{1, 64, 37}, {5, 96, 70}, {3, 2048, 256}}) {
    auto src = std::make_shared<Q8Source>("wq", randn(g, N, K, 1.0 / std::sqrt(K)));
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, K))}}, {{"w", whole(src)}}, {}};
    REQUIRE(a.weight("w").storage_type() == quant::Type::Q8_0);
    INFO("T " << T << " in " << K << " out " << N);
    // Against the reference on the dequantized weights (the oracle's contract): the same values.
    check_all("matmul", a, 2e-6);
  }
}
