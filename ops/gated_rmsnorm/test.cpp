// gated_rmsnorm: every variant against the reference on the op's cases (cases.cpp), and what is
// special about its kernels.
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

namespace {

void require_all_close(const std::string& op, const gpu::OpArgs& a, double tol) {
  for (auto& v : vulkan_variants(op)) require_close(op, v, a, tol);
}

}  // namespace

HL_TEST_EVERY_VARIANT("gated_rmsnorm")

TEST_CASE("vk ops: gated_rmsnorm per value head", "[vk][ops][deltanet]") {
  std::mt19937_64 g(14);
  for (auto [T, nv, dv] : {std::tuple{1, 32, 128}, {7, 32, 128}, {5, 4, 32}, {3, 5, 13}}) {
    gpu::OpArgs a{{{"o", Tensor::from(randn(g, T, nv * dv, 0.3))}, {"z", Tensor::from(randn(g, T, nv * dv, 2.0))}},
                  {{"gain", weight("gain", randn(g, 1, dv, 0.2, 1.0))}},
                  {{"eps", 1e-6}}};
    require_all_close("gated_rmsnorm", a, 1e-6);
  }
}
