// moe_block_add_rmsnorm's Vulkan variant against its reference (moe_block's and add_rmsnorm's reference variants
// composed): moe_block's Test cases (f32 and q4_K/q6_K experts, T = 1..3) with a residual and a gain, both outputs
// compared; under other tunings of moe_block's kernels (step 3 in one workgroup or many, some past the rows); two calls
// back to back on one ticket counter; a residual that does not fit refused.
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_VARIANT("moe_block_add_rmsnorm")

TEST_CASE("vk ops: moe_block_add_rmsnorm under other tunings, calls back to back", "[vk][ops][moe_block_add_rmsnorm]") {
  auto& prof = device().ctx().profile();
  const gpu::OpDef& op = gpu::Registry::get().op("moe_block_add_rmsnorm");
  for (const auto& [wg, rows] : {std::pair{64u, 1u}, {128u, 3u}, {32u, 1024u}}) {
    const vk::ScopedTuning scope(prof, {{"moe_block.fused_decode.wg", wg}, {"moe_block.fused_decode.down_rows", rows}});
    for (const auto& c : op.cases(gpu::Scale::Test)) {
      INFO("wg " << wg << ", down rows " << rows << ", " << c.label);
      std::mt19937_64 g(81);
      const gpu::OpArgs a = c.inputs(g);
      require_close("moe_block_add_rmsnorm", "vulkan:fused_decode", a, op.tolerance);
      // A second call on the same ticket counter (the first's last workgroup reset it), on other inputs.
      std::mt19937_64 g2(91);
      require_close_second_call("moe_block_add_rmsnorm", "vulkan:fused_decode", a, c.inputs(g2), op.tolerance);
    }
  }
}

TEST_CASE("vk ops: moe_block_add_rmsnorm refuses a residual that does not fit", "[vk][ops][moe_block_add_rmsnorm]") {
  std::mt19937_64 g(82);
  const gpu::OpDef& op = gpu::Registry::get().op("moe_block_add_rmsnorm");
  gpu::OpArgs a = op.cases(gpu::Scale::Test).at(0).inputs(g);
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  a.set("res", Tensor::from(randn(g, 1, 100)));
  CHECK_THROWS_WITH(gpu::Registry::get().variant("moe_block_add_rmsnorm", "vulkan:fused_decode").run(ctx, a),
                    Catch::Contains("do not fit"));
}
