// matmul_add_rmsnorm's Vulkan variant against its reference (matmul's and add_rmsnorm's reference variants composed):
// fresh random inputs on every case (q4_K and f32 weights, a width no workgroup size divides, a few tokens), both
// outputs compared; under other tunings of the mat-vec (the last workgroup's tail after one or many workgroups); the
// ticket counter back at 0 after each call (a second call on other inputs is still right); bad shapes refused.
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_VARIANT("matmul_add_rmsnorm")

TEST_CASE("vk ops: matmul_add_rmsnorm under other tunings, calls back to back", "[vk][ops][matmul_add_rmsnorm]") {
  auto& prof = device().ctx().profile();
  const gpu::OpDef& op = gpu::Registry::get().op("matmul_add_rmsnorm");
  // groups 1: a single workgroup walks every row and is its own last; rows 1 with wg 32: the most workgroups.
  for (const auto& [wg, rows, groups] : {std::tuple{32u, 1u, 0u}, {128u, 4u, 1u}, {256u, 2u, 3u}}) {
    const vk::ScopedTuning scope(prof, {{"matmul.qmatvec_direct.wg", wg},
                                        {"matmul.qmatvec_direct.rows", rows},
                                        {"matmul.qmatvec_direct.groups", groups}});
    for (const auto& c : op.cases(gpu::Scale::Test)) {
      INFO("wg " << wg << ", rows " << rows << ", groups " << groups << ", " << c.label);
      std::mt19937_64 g(71);
      const gpu::OpArgs a = c.inputs(g);
      require_close("matmul_add_rmsnorm", "vulkan:fused_decode", a, op.tolerance);
      // A second call on the same ticket counter (the first's last workgroup reset it), on other inputs.
      std::mt19937_64 g2(90);
      require_close_second_call("matmul_add_rmsnorm", "vulkan:fused_decode", a, c.inputs(g2), op.tolerance);
    }
  }
}

TEST_CASE("vk ops: matmul_add_rmsnorm refuses a residual or gain that does not fit", "[vk][ops][matmul_add_rmsnorm]") {
  check_refuses_misfit("matmul_add_rmsnorm", "vulkan:fused_decode", "x", 72);
}
