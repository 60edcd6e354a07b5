// slice: every variant against the reference on the op's cases (cases.cpp), and what is
// special about its kernels.
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_VARIANT("slice")

TEST_CASE("vk ops: slice", "[vk][ops]") {
  std::mt19937_64 g(11);
  // (T, cols, period, offset, width): q|gate halves of the real q_proj (period 512), the GDN q|k|v split
  // (period = conv_dim), odd blocks, a whole-row copy.
  for (auto [T, cols, period, offset, width] : {std::tuple{3, 16 * 512, 512, 0, 256}, {3, 16 * 512, 512, 256, 256},
                                                {2, 8192, 8192, 2048, 2048}, {5, 7 * 13, 13, 4, 5}, {1, 10, 10, 0, 10}}) {
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, cols))}}, {},
                  {{"period", period}, {"offset", offset}, {"width", width}}};
    for (auto& v : vulkan_variants("slice")) require_close("slice", v, a, 0.0);  // a copy: exact
  }
}
