// add: every variant against the reference on the op's cases (cases.cpp), and what is
// special about its kernels.
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_VARIANT("add")

TEST_CASE("vk ops: add", "[vk][ops]") {
  std::mt19937_64 g(1);
  for (auto [r, c] : {std::pair{1, 7}, {5, 2048}, {3, 1000}}) {
    gpu::OpArgs a{{{"a", Tensor::from(randn(g, r, c))}, {"b", Tensor::from(randn(g, r, c))}}, {}, {}};
    for (auto& v : vulkan_variants("add")) require_close("add", v, a, 0.0);
  }
}
