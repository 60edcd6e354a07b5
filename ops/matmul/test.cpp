// matmul: every variant against the reference on the op's cases (cases.cpp), and what is
// special about its kernels.
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_VARIANT("matmul")
HL_TEST_EVERY_VARIANT("lm_head")

TEST_CASE("vk ops: matmul and lm_head, every variant, odd and real shapes", "[vk][ops]") {
  std::mt19937_64 g(3);
  // (T, in, out): odd sizes that are not multiples of any tile, decode and prefill widths, a real projection.
  for (auto [T, K, N] : {std::tuple{1, 37, 53}, {3, 100, 17}, {9, 64, 40}, {33, 129, 70}, {1, 2048, 512}, {20, 2048, 256}}) {
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, K))}}, {{"w", weight("w", randn(g, N, K, 1.0 / std::sqrt(K)))}}, {}};
    for (const char* op : {"matmul", "lm_head"})
      for (auto& v : vulkan_variants(op)) require_close(op, v, a, 2e-6);
  }
}
