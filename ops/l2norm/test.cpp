// l2norm: every variant against the reference on the op's cases (cases.cpp), and what is
// special about its kernels.
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

namespace {

void require_all_close(const std::string& op, const gpu::OpArgs& a, double tol) {
  for (auto& v : vulkan_variants(op)) require_close(op, v, a, tol);
}

}  // namespace

HL_TEST_EVERY_VARIANT("l2norm")

TEST_CASE("vk ops: l2norm per head", "[vk][ops][deltanet]") {
  std::mt19937_64 g(12);
  for (auto [T, n, d] : {std::tuple{1, 16, 128}, {7, 16, 128}, {5, 2, 32}, {3, 5, 13}}) {
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, n * d, 2.0))}}, {}, {{"head_dim", d}, {"scale", 1 / std::sqrt(d)}, {"eps", 1e-6}}};
    require_all_close("l2norm", a, 1e-6);
  }
}
