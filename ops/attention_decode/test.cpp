// attention_decode's Vulkan variant against its reference (slice, rmsnorm, rope and attention's reference variants
// composed): fresh random inputs and caches on every case (the first token, the model's heads, split keys, an odd head
// dim with partial rotation, full rotation), the output and both caches compared; under other tunings (workgroup
// size, keys per step, split counts, the P V loop over whole blocks); bad shapes refused.
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_VARIANT("attention_decode")

TEST_CASE("vk ops: attention_decode under other tunings, calls back to back", "[vk][ops][attention_decode]") {
  auto& prof = device().ctx().profile();
  const gpu::OpDef& op = gpu::Registry::get().op("attention_decode");
  // wg 32 with D 256: 8 dims per invocation; block 8: lavapipe-sized scoring steps; splits 1 (one workgroup per head,
  // no merge) and 3 (uneven splits whose last holds the new key); pv_full 1: the P V sums over whole blocks; wg 32 with
  // one split per block of 8: more splits (38 at context 301) than invocations, merged in chunks of the workgroup.
  for (const auto& [wg, block, splits, pv_full] :
       {std::tuple{32u, 8u, 1u, 1u}, {256u, 64u, 3u, 1u}, {64u, 16u, 1000u, 0u}, {128u, 32u, 3u, 1u}, {32u, 8u, 1000u, 1u}}) {
    const vk::ScopedTuning scope(prof, {{"attention_decode.fused_decode.wg", wg},
                                        {"attention_decode.fused_decode.block", block},
                                        {"attention_decode.fused_decode.splits", splits},
                                        {"attention_decode.fused_decode.pv_full", pv_full}});
    for (const auto& c : op.cases(gpu::Scale::Test)) {
      INFO("wg " << wg << ", block " << block << ", splits " << splits << ", pv_full " << pv_full << ", " << c.label);
      std::mt19937_64 g(61);
      const gpu::OpArgs a = c.inputs(g);
      require_close("attention_decode", "vulkan:fused_decode", a, op.tolerance);
      // A second call on the same ticket counters (each head's last split reset its own), on other inputs.
      std::mt19937_64 g2(62);
      require_close_second_call("attention_decode", "vulkan:fused_decode", a, c.inputs(g2), op.tolerance);
    }
  }
}

TEST_CASE("vk ops: attention_decode refuses what it cannot run", "[vk][ops][attention_decode]") {
  std::mt19937_64 g(62);
  const gpu::OpDef& op = gpu::Registry::get().op("attention_decode");
  const gpu::OpArgs a = op.cases(gpu::Scale::Test).at(3).inputs(g);
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  const auto& v = gpu::Registry::get().variant("attention_decode", "vulkan:fused_decode");
  gpu::OpArgs two = a;  // a prompt chunk
  two.set("qg", Tensor::from(randn(g, 2, a.in("qg").cols())));
  CHECK_THROWS_WITH(v.run(ctx, two), Catch::Contains("one token"));
  gpu::OpArgs odd = a;
  odd.p["rot_dims"] = 23;
  CHECK_THROWS_WITH(v.run(ctx, odd), Catch::Contains("rotary dims"));
  gpu::OpArgs gain = a;
  gain.w.at("k_norm") = weight("k_norm", randn(g, 1, 7));
  CHECK_THROWS_WITH(v.run(ctx, gain), Catch::Contains("do not fit"));
  gpu::OpArgs full = a;  // no row left in the cache for the new key
  full.set("k_cache", Tensor::from(randn(g, int(a.iparam("kv_len")), a.in("k").cols())));
  CHECK_THROWS_WITH(v.run(ctx, full), Catch::Contains("cannot take row"));
}

// The P V sums over whole blocks add the same terms in the same order as the loop over a block's keys, and exact zeros
// for the keys past its end: the same output, bit for bit.
TEST_CASE("vk ops: attention_decode's P V over whole blocks equals the loop over the block's keys", "[vk][ops][attention_decode]") {
  auto& prof = device().ctx().profile();
  const gpu::OpDef& op = gpu::Registry::get().op("attention_decode");
  const auto& v = gpu::Registry::get().variant("attention_decode", "vulkan:fused_decode");
  for (const auto& c : op.cases(gpu::Scale::Test)) {
    INFO(c.label);
    Mat<float> out[2];
    for (uint32_t pv_full : {0u, 1u}) {
      const vk::ScopedTuning scope(prof, {{"attention_decode.fused_decode.pv_full", pv_full},
                                          {"attention_decode.fused_decode.splits", 3}});
      std::mt19937_64 g(63);
      gpu::OpArgs a = c.inputs(g);
      gpu::WeightStore ws(&device());
      gpu::VariantCtx ctx{&device(), &ws};
      v.run(ctx, a);
      out[pv_full] = a.t.at("o").f32();
    }
    REQUIRE(out[0].size() == out[1].size());
    CHECK(out[0].cwiseAbs().maxCoeff() > 0);
    CHECK(std::memcmp(out[0].data(), out[1].data(), size_t(out[0].size()) * 4) == 0);
  }
}
