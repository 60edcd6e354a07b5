// gated_rmsnorm_matmul's Vulkan variant against its reference (gated_rmsnorm's and matmul's reference variants
// composed): every block type at the narrowest head width its units allow, partial passes, two tokens; under other
// tunings of the mat-vec (the most workgroups, one workgroup walking every row, f32 products instead of x16); refusals.
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_VARIANT("gated_rmsnorm_matmul")

TEST_CASE("vk ops: gated_rmsnorm_matmul under other tunings", "[vk][ops][gated_rmsnorm_matmul]") {
  check_qmatvec_direct_tunings("gated_rmsnorm_matmul", "vulkan:fused_decode", 79);
}

TEST_CASE("vk ops: gated_rmsnorm_matmul refuses what it cannot run", "[vk][ops][gated_rmsnorm_matmul]") {
  check_refuses_misfit("gated_rmsnorm_matmul", "vulkan:fused_decode", "z", 80);  // a gate or gain of another width
  std::mt19937_64 g(81);
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  const auto& v = gpu::Registry::get().variant("gated_rmsnorm_matmul", "vulkan:fused_decode");
  const gpu::OpArgs a = gpu::Registry::get().op("gated_rmsnorm_matmul").cases(gpu::Scale::Test).at(0).inputs(g);  // q4_K
  gpu::OpArgs narrow = a;  // heads of 32: a q4_K unit reads values 32 columns apart, across two heads
  narrow.w.at("gain") = weight("gain", gpu::randn(g, 1, 32, 0.2, 1.0));
  CHECK_THROWS_WITH(v.run(ctx, narrow), Catch::Contains("within heads of 32"));
}
