// moe_block's Vulkan variant (vulkan:fused_decode) against its reference, the parts' reference variants composed
// (matmul for the router, moe_router, moe_experts, shared_expert): fresh random weights and x on every case, f32 and
// the GGUF's block types, decode and a few tokens, and under other tunings (rows per workgroup, workgroup size, the router's
// loads, step 1's row order).
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_VARIANT("moe_block")

TEST_CASE("vk ops: moe_block under other tunings", "[vk][ops][moe_block]") {
  auto& prof = device().ctx().profile();
  const gpu::OpDef& op = gpu::Registry::get().op("moe_block");
  const auto cs = op.cases(gpu::Scale::Test);
  // One row per workgroup, rows not dividing the widths, more rows than subgroups; the last also reads the f32 router a
  // word at a time and the middle one takes its routes by the ranking pass instead of K argmax rounds, and step 1's
  // rows consecutive per workgroup instead of strided; the first reads the router's rows as consecutive 16-byte words across
  // the lanes (router16 2, the default), the middle ones a unit per lane (1); the first takes its routes by the merge of sorted lists instead of K
  // argmax rounds (topk_merge 1); the fourth, with 16-bit x, several rows per subgroup in steps 2 and 3 (RPS: 3 on
  // lavapipe's 8 subgroups of 8) and rows that do not divide the widths; the first and the fourth load step 3's weights
  // before its staging (early_down); the second and the third compute the shared expert's SwiGLU in step 2
  // (shared_step 2: with 16-bit x, and with f32 products).
  for (const auto& [wg, rows] : {std::pair{64u, 1u}, {128u, 3u}, {32u, 16u}, {64u, 20u}}) {
    const vk::ScopedTuning scope(prof, {{"moe_block.fused_decode.wg", wg}, {"moe_block.fused_decode.x_rows", rows},
                                        {"moe_block.fused_decode.gate_up_rows", rows}, {"moe_block.fused_decode.down_rows", rows + 1},
                                        {"moe_block.fused_decode.router16", rows == 16u ? 0u : rows == 1u ? 2u : 1u},
                                        {"moe_block.fused_decode.rank", rows == 3u ? 1u : 0u},
                                        {"moe_block.fused_decode.interleave", rows == 3u ? 0u : 1u},
                                        {"moe_block.fused_decode.x16", rows == 16u ? 0u : 1u},
                                        {"moe_block.fused_decode.topk_merge", rows == 1u ? 1u : 0u},
                                        {"moe_block.fused_decode.early_down", rows == 1u || rows == 20u ? 1u : 0u},
                                        {"moe_block.fused_decode.shared_step", rows == 3u || rows == 16u ? 2u : 1u}});
    for (const auto& c : cs) {
      INFO("wg " << wg << ", rows " << rows << ", " << c.label);
      std::mt19937_64 g(31);
      if (rows != 16u) {  // K-quant experts: x as 16-bit fixed point, held to kX16Tolerance and really rounded
        const auto a = c.inputs(g);
        require_close("moe_block", "vulkan:fused_decode", a, op.tolerance);
        const bool x16 = device().info().integer_dot_product && c.group == "q4_K";
        for (auto& [name, e] : compare_with_reference("moe_block", "vulkan:fused_decode", a))
          CHECK((x16 ? e.rel_l2 > 1e-7 : e.rel_l2 <= op.tolerance));
        continue;
      }
      for (auto& [name, e] : compare_with_reference("moe_block", "vulkan:fused_decode", c.inputs(g))) {  // f32 products
        CHECK(e.finite);
        CHECK(e.rel_l2 <= op.tolerance);
      }
    }
  }
}

// steps 2 (moe_block_experts.comp): gate/up and down in one dispatch, down's K split over the workgroups and y summed by
// float atomics, against the reference on every case (f32: the test widths give fewer workgroups per token than shared
// units, so some outputs take several shared units in one workgroup; q4_K/q6_K at 256 and 512 wide: one or two units
// per workgroup, down's units loaded early or not, 16-bit x or f32 gate/up products, workgroups of 2 to 128 subgroups
// on lavapipe). Two dispatches per block where the device has float atomics.
TEST_CASE("vk ops: moe_block in two steps", "[vk][ops][moe_block]") {
  auto& prof = device().ctx().profile();
  const gpu::OpDef& op = gpu::Registry::get().op("moe_block");
  // down_columns: both downs read from chunk columns (K-quants; f32 downs keep their rows).
  for (const auto& [units, early, split_wg, x16, cols] :
       {std::tuple{1u, 1u, 1024u, 1u, 1u}, {2u, 0u, 64u, 1u, 0u}, {1u, 0u, 16u, 0u, 1u}, {2u, 1u, 256u, 0u, 0u}, {1u, 0u, 512u, 1u, 1u},
        {2u, 0u, 128u, 1u, 1u}}) {
    const vk::ScopedTuning scope(prof, {{"moe_block.fused_decode.steps", 2}, {"moe_block.fused_decode.split_units", units},
                                        {"moe_block.fused_decode.early_down", early},
                                        {"moe_block.fused_decode.split_wg", split_wg}, {"moe_block.fused_decode.x16", x16},
                                        {"moe_block.fused_decode.down_columns", cols}});
    for (const auto& c : op.cases(gpu::Scale::Test))
      // The GGUF's q6_K downs, or q4_K (read 16 bytes at a time), or q5_K (chunk columns only).
      for (quant::Type down : {quant::Type::Q6_K, quant::Type::Q4_K, quant::Type::Q5_K}) {
      if (down != quant::Type::Q6_K && (c.group != "q4_K" || (down == quant::Type::Q5_K && !cols))) continue;
      INFO("units " << units << ", early " << early << ", split_wg " << split_wg << ", x16 " << x16 << ", columns " << cols
                    << ", " << c.label << ", " << quant::type_name(down) << " down");
      std::mt19937_64 g(34);
      auto a = c.inputs(g);
      if (down != quant::Type::Q6_K) {
        const auto& d = a.w.at("down");
        const auto& sd = a.w.at("sdown");
        a.w.insert_or_assign("down", gpu::random_quantized(g, "down", d.rows, d.cols, down, 1 / std::sqrt(double(d.cols))));
        a.w.insert_or_assign("sdown", gpu::random_quantized(g, "sdown", sd.rows, sd.cols, down, 1 / std::sqrt(double(sd.cols))));
      }
      require_close("moe_block", "vulkan:fused_decode", a, op.tolerance);
      if (!device().info().float32_atomic_add) continue;
      gpu::WeightStore ws(&device());
      gpu::VariantCtx ctx{&device(), &ws};
      uint64_t count = 0;
      for (int i = 0; i < 2; ++i) {  // the second call's dispatches: the weights are on the device by then
        gpu::OpArgs run = a;
        for (auto& [n, t] : run.t) t = t.clone();
        device().flush();
        const uint64_t before = device().stats().dispatches;
        gpu::Registry::get().variant("moe_block", "vulkan:fused_decode").run(ctx, run);
        device().flush();
        count = device().stats().dispatches - before;
      }
      // Two unless the widths do not split into the units asked for (then three).
      const int64_t F = c.shape.at("width");
      CHECK(count == (F % (32 * units) == 0 ? 2u : 3u));
    }
  }
}

TEST_CASE("vk ops: moe_block refuses widths that are not whole units, and a step for the shared expert it lacks", "[vk][ops][moe_block]") {
  std::mt19937_64 g(32);
  const int64_t E = 4, F = 48, H = 64;
  gpu::OpArgs a{{{"x", Tensor::from(randn(g, 1, H))}},
                {{"router", weight("router", randn(g, E, H))}, {"gate", weight("gate", randn(g, E * F, H))},
                 {"up", weight("up", randn(g, E * F, H))}, {"down", weight("down", randn(g, E * H, F))},
                 {"sgate", weight("sgate", randn(g, 64, H))}, {"sup", weight("sup", randn(g, 64, H))},
                 {"sdown", weight("sdown", randn(g, H, 64))}, {"gate_w", weight("gate_w", randn(g, 1, H))}},
                {{"k", 2}, {"n_experts", double(E)}}};
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  CHECK_THROWS_WITH(gpu::Registry::get().variant("moe_block", "vulkan:fused_decode").run(ctx, a), Catch::Contains("multiples of 32"));
  a.p["k"] = 5;  // more slots than experts
  CHECK_THROWS_WITH(gpu::Registry::get().variant("moe_block", "vulkan:fused_decode").run(ctx, a), Catch::Contains("top-5 of 4"));
  gpu::OpArgs whole = a;  // whole units, top-2, but no third step for the shared expert
  whole.p["k"] = 2;
  whole.w.at("gate") = weight("gate", randn(g, E * 64, H));
  whole.w.at("up") = weight("up", randn(g, E * 64, H));
  whole.w.at("down") = weight("down", randn(g, E * H, 64));
  const vk::ScopedTuning scope(device().ctx().profile(), {{"moe_block.fused_decode.shared_step", 3}});
  CHECK_THROWS_WITH(gpu::Registry::get().variant("moe_block", "vulkan:fused_decode").run(ctx, whole),
                    Catch::Contains("shared_step = 3 must be 1 or 2"));
}

// Tied router logits (every odd expert's router row a copy of the even one before it, so equal p in pairs; or row e a
// copy of row E - 1 - e, ties between far-apart ids, in different lanes and rounds of lanes): step 2's routes by K argmax
// rounds and by the merge of sorted lists take the lower id first, as the reference does: the same outputs bit for bit,
// and both within the tolerance of the reference.
TEST_CASE("vk ops: moe_block routes tied logits as the reference", "[vk][ops][moe_block]") {
  auto& prof = device().ctx().profile();
  const gpu::OpDef& op = gpu::Registry::get().op("moe_block");
  for (const auto& c : op.cases(gpu::Scale::Test)) {
    if (c.shape.at("T") != 1.0) continue;
    for (bool mirror : {false, true}) {
      std::mt19937_64 g(33);
      gpu::OpArgs a = c.inputs(g);
      const int64_t E = c.shape.at("experts"), H = c.shape.at("hidden");
      Mat<float> r = randn(g, E, H, 1 / std::sqrt(double(H)));
      if (mirror)
        for (int64_t e = 0; e < E / 2; ++e) r.row(E - 1 - e) = r.row(e);
      else
        for (int64_t e = 1; e < E; e += 2) r.row(e) = r.row(e - 1);
      a.w.insert_or_assign("router", weight("router", r));
      std::vector<Mat<float>> ys;
      for (uint32_t merge : {0u, 1u}) {
        INFO(c.label << (mirror ? ", mirrored ties" : ", paired ties") << ", topk_merge " << merge);
        const vk::ScopedTuning scope(prof, {{"moe_block.fused_decode.topk_merge", merge}});
        require_close("moe_block", "vulkan:fused_decode", a, op.tolerance);
        gpu::WeightStore ws(&device());
        gpu::VariantCtx ctx{&device(), &ws};
        gpu::OpArgs got = a;
        for (auto& [n, t] : got.t) t = t.clone();
        gpu::Registry::get().variant("moe_block", "vulkan:fused_decode").run(ctx, got);
        ys.push_back(got.t.at("y").f32());
      }
      CHECK((ys[0].array() == ys[1].array()).all());
    }
  }
}
