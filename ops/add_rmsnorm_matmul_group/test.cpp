// add_rmsnorm_matmul_group's Vulkan variant against its reference (add_rmsnorm's and matmul_group's reference variants
// composed): matmul_group's Test cases (every block type, 2 to 4 weights, partial passes, two tokens) with a residual, an
// addend and a gain, every output compared (the sum and each projection); under other tunings of the mat-vec (the most
// workgroups, one workgroup walking every row, f32 products instead of x16); bad shapes refused.
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_VARIANT("add_rmsnorm_matmul_group")

TEST_CASE("vk ops: add_rmsnorm_matmul_group under other tunings", "[vk][ops][add_rmsnorm_matmul_group]") {
  check_qmatvec_direct_tunings("add_rmsnorm_matmul_group", "vulkan:fused_decode", 73);
}

TEST_CASE("vk ops: add_rmsnorm_matmul_group refuses an addend or gain that does not fit", "[vk][ops][add_rmsnorm_matmul_group]") {
  check_refuses_misfit("add_rmsnorm_matmul_group", "vulkan:fused_decode", "a", 74);
}
