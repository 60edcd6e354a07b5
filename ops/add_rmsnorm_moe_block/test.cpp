// add_rmsnorm_moe_block's Vulkan variant against its reference (add_rmsnorm's and moe_block's reference variants
// composed): moe_block's Test cases (f32 and q4_K/q6_K experts, T = 1..3) with a residual, an addend and a gain, both
// outputs compared; under other tunings of moe_block's kernels (step 1 in the most workgroups or one per token, f32
// products instead of x16, step 1's rows loaded before its staging); bad shapes refused.
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_VARIANT("add_rmsnorm_moe_block")

TEST_CASE("vk ops: add_rmsnorm_moe_block under other tunings", "[vk][ops][add_rmsnorm_moe_block]") {
  auto& prof = device().ctx().profile();
  const gpu::OpDef& op = gpu::Registry::get().op("add_rmsnorm_moe_block");
  // early_x: step 1's first row per subgroup loaded before the staging (the rest, and rows of other types, after it).
  // shared 2: the shared expert's SwiGLU in step 2, on the normed row step 1 wrote (step 1 the router's rows only).
  for (const auto& [wg, x_rows, x16, early, shared] : {std::tuple{32u, 1u, 1u, 1u, 2u}, {128u, 1024u, 1u, 1u, 1u},
                                                      {64u, 3u, 0u, 1u, 2u}, {256u, 8u, 1u, 1u, 1u}}) {
    const vk::ScopedTuning scope(prof, {{"moe_block.fused_decode.wg", wg}, {"moe_block.fused_decode.x_rows", x_rows},
                                        {"moe_block.fused_decode.x16", x16}, {"moe_block.fused_decode.early_x", early},
                                        {"moe_block.fused_decode.shared_step", shared}});
    for (const auto& c : op.cases(gpu::Scale::Test)) {
      INFO("wg " << wg << ", x rows " << x_rows << ", x16 " << x16 << ", early_x " << early << ", shared step " << shared
                 << ", " << c.label);
      std::mt19937_64 g(83);
      require_close("add_rmsnorm_moe_block", "vulkan:fused_decode", c.inputs(g), op.tolerance);
    }
  }
}

TEST_CASE("vk ops: add_rmsnorm_moe_block refuses an addend or gain that does not fit", "[vk][ops][add_rmsnorm_moe_block]") {
  check_refuses_misfit("add_rmsnorm_moe_block", "vulkan:fused_decode", "a", 84);
}
