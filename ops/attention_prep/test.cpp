// attention_prep's Vulkan variant against its reference (slice, rmsnorm and rope's reference variants composed): fresh
// random inputs on every case (one token, the model's heads, far positions, an odd head dim with partial rotation, full
// rotation, none), all three outputs compared; under other tunings (workgroup and group sizes); bad shapes refused.
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_VARIANT("attention_prep")

TEST_CASE("vk ops: attention_prep under other tunings", "[vk][ops][attention_prep]") {
  auto& prof = device().ctx().profile();
  const gpu::OpDef& op = gpu::Registry::get().op("attention_prep");
  // group 64 on wg 64: one head per workgroup, its sum across subgroups (barriers) wherever subgroups are narrower; group
  // 4: 64 values per invocation at D 256; wg 32: more workgroups than heads' groups fill.
  for (const auto& [wg, group] : {std::pair{64u, 64u}, {256u, 4u}, {32u, 16u}, {128u, 0u}}) {
    const vk::ScopedTuning scope(prof, {{"attention_prep.fused.wg", wg}, {"attention_prep.fused.group", group}});
    for (const auto& c : op.cases(gpu::Scale::Test)) {
      INFO("wg " << wg << ", group " << group << ", " << c.label);
      std::mt19937_64 g(71);
      require_close("attention_prep", "vulkan:fused", c.inputs(g), op.tolerance);
    }
  }
}

TEST_CASE("vk ops: attention_prep refuses what it cannot run", "[vk][ops][attention_prep]") {
  std::mt19937_64 g(72);
  const gpu::OpDef& op = gpu::Registry::get().op("attention_prep");
  const gpu::OpArgs a = op.cases(gpu::Scale::Test).at(3).inputs(g);
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  const auto& v = gpu::Registry::get().variant("attention_prep", "vulkan:fused");
  gpu::OpArgs odd = a;
  odd.p["rot_dims"] = 23;
  CHECK_THROWS_WITH(v.run(ctx, odd), Catch::Contains("rotary dims"));
  gpu::OpArgs wide = a;
  wide.p["rot_dims"] = 2 * double(a.in("qg").cols());
  CHECK_THROWS_WITH(v.run(ctx, wide), Catch::Contains("rotary dims"));
  gpu::OpArgs heads = a;
  heads.p["n_q_heads"] = 7;
  CHECK_THROWS_WITH(v.run(ctx, heads), Catch::Contains("not 2 x 7 heads"));
  gpu::OpArgs rows = a;
  rows.set("k", Tensor::from(randn(g, a.in("qg").rows() + 1, a.in("k").cols())));
  CHECK_THROWS_WITH(v.run(ctx, rows), Catch::Contains("do not fit heads"));
  gpu::OpArgs gain = a;
  gain.w.at("k_norm") = weight("k_norm", randn(g, 1, 7));
  CHECK_THROWS_WITH(v.run(ctx, gain), Catch::Contains("gains of"));
  gpu::OpArgs tune = a;
  const vk::ScopedTuning scope(device().ctx().profile(), {{"attention_prep.fused.group", 3}});
  CHECK_THROWS_WITH(v.run(ctx, tune), Catch::Contains("powers of two"));
}
