// shared_expert: every variant against the reference on the op's cases (cases.cpp), and what is
// special about its kernels.
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_VARIANT("shared_expert")

TEST_CASE("vk ops: shared_expert, tiny and real width", "[vk][ops]") {
  std::mt19937_64 g(14);
  // T = 1: the per-token kernels; T >= shared_expert.fused.gemm_tokens: route_pack's grouped GEMM (37 tokens:
  // row tiles of 16 with a partial last one).
  for (auto [H, F] : {std::pair{128, 64}, {2048, 512}})
    for (int T : {1, 4, 37}) {
      gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, H))}},
                    {{"gate", weight("gate", randn(g, F, H, 1.0 / std::sqrt(H)))},
                     {"up", weight("up", randn(g, F, H, 1.0 / std::sqrt(H)))},
                     {"down", weight("down", randn(g, H, F, 1.0 / std::sqrt(F)))},
                     {"gate_w", weight("gate_w", randn(g, 1, H, 1.0 / std::sqrt(H)))}},
                    {}};
      for (auto& v : vulkan_variants("shared_expert")) require_close("shared_expert", v, a, 2e-6);
    }
}
