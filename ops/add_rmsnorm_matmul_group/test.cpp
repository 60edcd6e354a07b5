// add_rmsnorm_matmul_group's Vulkan variant against its reference (add_rmsnorm's and matmul_group's reference variants
// composed): matmul_group's Test cases (every block type, 2 to 4 weights, partial passes, two tokens) with a residual, an
// addend and a gain, every output compared (the sum and each projection); under other tunings of the mat-vec (the most
// workgroups, one workgroup walking every row, f32 products instead of x16); bad shapes refused.
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_VARIANT("add_rmsnorm_matmul_group")

TEST_CASE("vk ops: add_rmsnorm_matmul_group under other tunings", "[vk][ops][add_rmsnorm_matmul_group]") {
  auto& prof = device().ctx().profile();
  const gpu::OpDef& op = gpu::Registry::get().op("add_rmsnorm_matmul_group");
  // 256 x 3 rows: Hopper's tuning.
  for (const auto& [wg, rows, groups, x16] :
       {std::tuple{32u, 1u, 0u, 1u}, {128u, 4u, 1u, 1u}, {64u, 2u, 0u, 0u}, {256u, 3u, 0u, 1u}}) {
    const vk::ScopedTuning scope(prof, {{"add_rmsnorm_matmul_group.qmatvec_direct.wg", wg},
                                        {"add_rmsnorm_matmul_group.qmatvec_direct.rows", rows},
                                        {"add_rmsnorm_matmul_group.qmatvec_direct.groups", groups},
                                        {"add_rmsnorm_matmul_group.qmatvec_direct.x16", x16}});
    for (const auto& c : op.cases(gpu::Scale::Test)) {
      INFO("wg " << wg << ", rows " << rows << ", groups " << groups << ", x16 " << x16 << ", " << c.label);
      std::mt19937_64 g(73);
      require_close("add_rmsnorm_matmul_group", "vulkan:fused_decode", c.inputs(g), op.tolerance);
    }
  }
}

TEST_CASE("vk ops: add_rmsnorm_matmul_group refuses an addend or gain that does not fit", "[vk][ops][add_rmsnorm_matmul_group]") {
  check_refuses_misfit("add_rmsnorm_matmul_group", "vulkan:fused_decode", "a", 74);
}
