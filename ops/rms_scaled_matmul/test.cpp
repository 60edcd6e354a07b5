// rms_scaled_matmul's Vulkan variant against its reference (the rows scaled on the host, then matmul's reference): every
// block type at the narrowest head width its units allow, 1 to 4 partial sums per head, partial passes, two tokens; under
// other tunings of the mat-vec (the most workgroups, one workgroup walking every row, f32 products instead of x16); refusals.
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_VARIANT("rms_scaled_matmul")

TEST_CASE("vk ops: rms_scaled_matmul under other tunings", "[vk][ops][rms_scaled_matmul]") {
  check_qmatvec_direct_tunings("rms_scaled_matmul", "vulkan:fused_decode", 79);
}

TEST_CASE("vk ops: rms_scaled_matmul refuses what it cannot run", "[vk][ops][rms_scaled_matmul]") {
  std::mt19937_64 g(81);
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  const auto& v = gpu::Registry::get().variant("rms_scaled_matmul", "vulkan:fused_decode");
  const gpu::OpArgs a = gpu::Registry::get().op("rms_scaled_matmul").cases(gpu::Scale::Test).at(0).inputs(g);  // q4_K, 4 x 128
  gpu::OpArgs ragged = a;  // 7 sums: not whole parts
  ragged.set("sumsq", Tensor::from(gpu::randn(g, 1, 7)));
  CHECK_THROWS_WITH(v.run(ctx, ragged), Catch::Contains("do not fit"));
  gpu::OpArgs rows = a;  // sums for two tokens, x for one
  rows.set("sumsq", Tensor::from(gpu::randn(g, 2, 16)));
  CHECK_THROWS_WITH(v.run(ctx, rows), Catch::Contains("do not fit"));
  gpu::OpArgs narrow = a;  // 16 heads of 32: a q4_K unit reads values 32 columns apart, across two heads
  narrow.p["parts"] = 1;
  CHECK_THROWS_WITH(v.run(ctx, narrow), Catch::Contains("within heads of 32"));
}
