// gdn_decode's Vulkan variant against its reference (gdn_prep's and gdn_output's reference variants composed): fresh
// random inputs and carried conv and delta-rule states on every case (the model's head shape, odd head dims with three
// value heads per key head in GGUF's order, one value head per key head; each also with the norm left to the projection:
// the gate alone and the blocks' sums of squares), the outputs and both states compared; under other tunings (invocations per column, the contiguous k/q layout, column blocks per head, the ticket read late); a second call on the same ticket counters; refusals.
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_VARIANT("gdn_decode")

TEST_CASE("vk ops: gdn_decode under other tunings, calls back to back", "[vk][ops][gdn_decode]") {
  auto& prof = device().ctx().profile();
  const gpu::OpDef& op = gpu::Registry::get().op("gdn_decode");
  // blocks > 1: a value head's columns over several workgroups, the norm finished by its last block (its own counters).
  // acc: partial sums per dot product. late: the key head's ticket read at the step's end (its conv shift after the output).
  for (const auto& [split, contig, blocks, acc, late] :
       {std::tuple{1u, 0u, 1u, 1u, 1u}, {2u, 1u, 1u, 2u, 0u}, {8u, 1u, 1u, 1u, 1u}, {8u, 0u, 1u, 4u, 0u}, {4u, 0u, 4u, 2u, 1u},
        {8u, 1u, 2u, 4u, 0u}, {2u, 0u, 8u, 1u, 1u}, {8u, 1u, 1u, 1u, 0u}}) {
    const vk::ScopedTuning scope(prof, {{"gdn_output.fused_decode.split", split}, {"gdn_output.fused_decode.contig", contig},
                                        {"gdn_decode.fused_decode.blocks", blocks}, {"gdn_output.fused_decode.acc", acc},
                                        {"gdn_decode.fused_decode.late_ticket", late}});
    for (const auto& c : op.cases(gpu::Scale::Test)) {
      INFO("split " << split << ", contig " << contig << ", blocks " << blocks << ", acc " << acc << ", late " << late << ", "
                    << c.label);
      std::mt19937_64 g(101);
      const gpu::OpArgs a = c.inputs(g);
      require_close("gdn_decode", "vulkan:fused_decode", a, op.tolerance);
      // A second call on the same ticket counters (each key head's last value head reset its own), on other inputs.
      std::mt19937_64 g2(102);
      require_close_second_call("gdn_decode", "vulkan:fused_decode", a, c.inputs(g2), op.tolerance);
    }
  }
}

TEST_CASE("vk ops: gdn_decode refuses what it cannot run", "[vk][ops][gdn_decode]") {
  std::mt19937_64 g(103);
  const gpu::OpDef& op = gpu::Registry::get().op("gdn_decode");
  const gpu::OpArgs a = op.cases(gpu::Scale::Test).at(1).inputs(g);
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  const auto& v = gpu::Registry::get().variant("gdn_decode", "vulkan:fused_decode");
  gpu::OpArgs two = a;  // a prompt chunk
  two.set("x", Tensor::from(randn(g, 2, a.in("x").cols())));
  CHECK_THROWS_WITH(v.run(ctx, two), Catch::Contains("one token"));
  gpu::OpArgs bad_z = a;
  bad_z.set("z", Tensor::from(randn(g, 1, 7)));
  CHECK_THROWS_WITH(v.run(ctx, bad_z), Catch::Contains("do not fit"));
  gpu::OpArgs bad_conv = a;
  bad_conv.set("conv_state", Tensor::from(randn(g, 2, a.in("x").cols())));
  CHECK_THROWS_WITH(v.run(ctx, bad_conv), Catch::Contains("do not fit"));
  gpu::OpArgs odd_parts = op.cases(gpu::Scale::Test).at(4).inputs(g);  // the norm left out, 3 parts: 3 does not divide 128
  odd_parts.p["parts"] = 3;
  CHECK_THROWS_WITH(v.run(ctx, odd_parts), Catch::Contains("parts = 3 must divide"));
  const vk::ScopedTuning scope(device().ctx().profile(), {{"gdn_decode.fused_decode.blocks", 3}});  // 3 does not divide 40
  gpu::OpArgs odd = a;
  CHECK_THROWS_WITH(v.run(ctx, odd), Catch::Contains("blocks = 3 must divide"));
}
