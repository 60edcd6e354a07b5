// gdn_output's Vulkan variant against its reference (ssm_scan's and gated_rmsnorm's reference variants composed):
// fresh random inputs and carried state on every case (the model's head shape, odd head dims in GGUF's head order, a
// few tokens), the output and the updated state compared; under other tunings (invocations per column, tokens staged).
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_VARIANT("gdn_output")

TEST_CASE("vk ops: gdn_output under other tunings", "[vk][ops][gdn_output]") {
  auto& prof = device().ctx().profile();
  const gpu::OpDef& op = gpu::Registry::get().op("gdn_output");
  for (const auto& [split, stage] : {std::pair{1u, 1u}, {2u, 4u}, {8u, 16u}}) {
    const vk::ScopedTuning scope(prof, {{"gdn_output.fused_decode.split", split}, {"gdn_output.fused_decode.stage", stage}});
    for (const auto& c : op.cases(gpu::Scale::Test)) {
      INFO("split " << split << ", stage " << stage << ", " << c.label);
      std::mt19937_64 g(51);
      require_close("gdn_output", "vulkan:fused_decode", c.inputs(g), op.tolerance);
    }
  }
}

TEST_CASE("vk ops: gdn_output refuses a gate or gain that does not fit", "[vk][ops][gdn_output]") {
  std::mt19937_64 g(52);
  const gpu::OpDef& op = gpu::Registry::get().op("gdn_output");
  gpu::OpArgs a = op.cases(gpu::Scale::Test).at(0).inputs(g);
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  const auto& v = gpu::Registry::get().variant("gdn_output", "vulkan:fused_decode");
  gpu::OpArgs bad_z = a;
  bad_z.set("z", Tensor::from(randn(g, 1, 100)));
  CHECK_THROWS_WITH(v.run(ctx, bad_z), Catch::Contains("do not fit"));
  gpu::OpArgs bad_gain = a;
  bad_gain.w.at("gain") = weight("gain", randn(g, 1, 7));
  CHECK_THROWS_WITH(v.run(ctx, bad_gain), Catch::Contains("do not fit"));
}
