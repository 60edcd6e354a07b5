// shared_expert: every variant against the reference on the op's cases (cases.cpp), and what is
// special about its kernels.
#include "ops/cases.h"
#include "ops/matmul/qgemm_i8.h"
#include "ops/moe_experts/route_pack.h"
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_VARIANT("shared_expert")

TEST_CASE("vk ops: shared_expert, tiny and real width", "[vk][ops]") {
  std::mt19937_64 g(14);
  // T = 1: the per-token kernels; T >= shared_expert.fused.gemm_tokens: route_pack's grouped GEMM (37 tokens:
  // row tiles of 16 with a partial last one).
  for (auto [H, F] : {std::pair{128, 64}, {2048, 512}})
    for (int T : {1, 4, 37}) {
      gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, H))}},
                    {{"gate", weight("gate", randn(g, F, H, 1.0 / std::sqrt(H)))},
                     {"up", weight("up", randn(g, F, H, 1.0 / std::sqrt(H)))},
                     {"down", weight("down", randn(g, H, F, 1.0 / std::sqrt(F)))},
                     {"gate_w", weight("gate_w", randn(g, 1, H, 1.0 / std::sqrt(H)))}},
                    {}};
      // Each variant as the plan runs it: weights its kernels do not read go where its delegate sends them.
      for (auto& v : vulkan_variants("shared_expert")) require_close("shared_expert", resolved("shared_expert", v, a), a, 2e-6);
    }
}

// vulkan:fused_coopmat: prompt chunks on route_pack_coopmat's GEMM, with emulated matrices (any device with f16
// arithmetic): the f16 rounding of its inputs bounds the error (route_pack::kCoopmatTolerance).
TEST_CASE("vk ops: shared_expert prompt chunks on the coopmat GEMM, emulated", "[vk][ops]") {
  if (!device().info().shader_float16) {
    WARN("SKIPPED: no shaderFloat16 on " << device().info().name);
    return;
  }
  const vk::ScopedTuning emulate(device().ctx().profile(), {{"moe_experts.route_pack_coopmat.cm_emulate", 1}});
  std::mt19937_64 g(15);
  const int H = 256, F = 128;
  for (int T : {5, 37}) {
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, H))}},
                  {{"gate", weight("gate", randn(g, F, H, 1.0 / std::sqrt(H)))},
                   {"up", weight("up", randn(g, F, H, 1.0 / std::sqrt(H)))},
                   {"down", weight("down", randn(g, H, F, 1.0 / std::sqrt(F)))},
                   {"gate_w", weight("gate_w", randn(g, 1, H, 1.0 / std::sqrt(H)))}},
                  {}};
    INFO("T " << T);
    for (auto& [name, e] : compare_with_reference("shared_expert", "vulkan:fused_coopmat", a)) {
      INFO("output '" << name << "': rel L2 " << e.rel_l2);
      CHECK(e.finite);
      CHECK(e.rel_l2 <= 3e-3);
      CHECK(e.rel_l2 > 1e-5);  // f16 inputs: the coopmat GEMM ran, not the f32 grouped GEMM (~1e-7)
    }
  }
}

// vulkan:dense_coopmat: prompt chunks as dense GEMMs on matmul's qgemm_coopmat with emulated matrices, with and without
// K split (min_groups out of reach, one unit per step: gate and up 8 steps in 2 parts, down 4 steps in one).
TEST_CASE("vk ops: shared_expert prompt chunks as dense coopmat GEMMs, emulated", "[vk][ops]") {
  if (!device().info().shader_float16) {
    WARN("SKIPPED: no shaderFloat16 on " << device().info().name);
    return;
  }
  std::mt19937_64 g(16);
  const int H = 256, F = 128;
  const std::string p = "matmul.qgemm_coopmat.";
  for (bool split : {false, true})
    for (int T : {5, 37}) {
      std::map<std::string, uint32_t> t{{p + "cm_emulate", 1}};
      if (split) t.insert({{p + "k_units", 1}, {p + "min_groups", 1u << 20}, {p + "split_k", 4}});
      const vk::ScopedTuning tune(device().ctx().profile(), t);
      gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, H))}},
                    {{"gate", weight("gate", randn(g, F, H, 1.0 / std::sqrt(H)))},
                     {"up", weight("up", randn(g, F, H, 1.0 / std::sqrt(H)))},
                     {"down", weight("down", randn(g, H, F, 1.0 / std::sqrt(F)))},
                     {"gate_w", weight("gate_w", randn(g, 1, H, 1.0 / std::sqrt(H)))}},
                    {}};
      INFO("T " << T << (split ? ", K split" : ""));
      for (auto& [name, e] : compare_with_reference("shared_expert", "vulkan:dense_coopmat", a)) {
        INFO("output '" << name << "': rel L2 " << e.rel_l2);
        CHECK(e.finite);
        CHECK(e.rel_l2 <= 3e-3);
        CHECK(e.rel_l2 > 1e-5);  // f16 inputs: the coopmat GEMMs ran
      }
    }
}

// shared_expert.dense.pair: gate and up as one two-weight pass (qgemm_dense_pair: the gated tiles writing both products,
// their splits of K summed in the SwiGLU pass), on f32 and q4_K weights, unsplit and split in K; on emulated matrices
// (the quantized weights also from chunk columns, matmul.qgemm_coopmat.columns: q4_K gate/up, q6_K down) and on the
// scalar kernels. Each against the reference, and in fewer dispatches than two GEMMs (so the pass ran).
TEST_CASE("vk ops: shared_expert prompt chunks with gate and up in one pass", "[vk][ops]") {
  if (!device().info().shader_float16) {
    WARN("SKIPPED: no shaderFloat16 on " << device().info().name);
    return;
  }
  std::mt19937_64 g(17);
  const int H = 256, F = 256;  // whole q6_K blocks in down's rows
  for (const char* variant : {"vulkan:dense_coopmat", "vulkan:dense_qgemm"})
    for (bool q : {false, true})
      for (bool split : {false, true})
        for (uint32_t cols : {0u, 1u}) {  // a partial row tile (T 37)
          const int T = 37;
          const bool coopmat = std::string(variant) == "vulkan:dense_coopmat";
          if (!coopmat && (!q || !split || cols)) continue;  // the scalar tiles: one shape
          if (cols && !q) continue;                          // chunk columns: K-quants only
          const std::string p = coopmat ? "matmul.qgemm_coopmat." : "matmul.qgemm.";
          std::map<std::string, uint32_t> t{{"matmul.qgemm_coopmat.cm_emulate", 1}, {"matmul.qgemm_coopmat.columns", cols}};
          if (split) t.insert({{p + "k_units", 1}, {p + "min_groups", 1u << 20}, {p + "split_k", 4}});
          const auto w = [&](const char* name, int rows, int cols, quant::Type type) {
            return q ? gpu::random_quantized(g, name, rows, cols, type, 1.0 / std::sqrt(cols))
                     : weight(name, randn(g, rows, cols, 1.0 / std::sqrt(cols)));
          };
          gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, H))}},
                        {{"gate", w("gate", F, H, quant::Type::Q4_K)},
                         {"up", w("up", F, H, quant::Type::Q4_K)},
                         {"down", w("down", H, F, quant::Type::Q6_K)},
                         {"gate_w", weight("gate_w", randn(g, 1, H, 1.0 / std::sqrt(H)))}},
                        {}};
          INFO(variant << (q ? ", q4_K" : ", f32") << (split ? ", K split" : "") << (cols ? ", chunk columns" : "") << ", T " << T);
          uint64_t dispatches[2] = {0, 0};
          for (uint32_t pair : {0u, 1u}) {
            auto tp = t;
            tp["shared_expert.dense.pair"] = pair;
            const vk::ScopedTuning tune(device().ctx().profile(), tp);
            const uint64_t before = device().stats().dispatches;
            for (auto& [name, e] : compare_with_reference("shared_expert", variant, a)) {
              INFO("pair " << pair << ", output '" << name << "': rel L2 " << e.rel_l2);
              CHECK(e.finite);
              CHECK(e.rel_l2 <= 3e-3);
              CHECK(e.rel_l2 > 1e-6);  // f16 weight tiles: the quantized GEMMs ran
            }
            dispatches[pair] = device().stats().dispatches - before;
          }
          CHECK(dispatches[1] < dispatches[0]);
        }
}

// vulkan:dense_i8: the three GEMMs on integer dot products (x, then h, rounded to 8 bits per 32 values: route_pack's
// kI8Tolerance, and really rounded), q4_K gate/up with q6_K or q8_0 down, partial tiles; f32 weights and decode go to
// vulkan:fused; vulkan:fused hands prompt chunks to it where asked.
TEST_CASE("vk ops: shared_expert prompt chunks on integer dot products", "[vk][ops][quant]") {
  if (!gpu::qgemm_i8_unavailable(device()).empty()) {
    WARN("SKIPPED: no shader integer dot product on " << device().info().name);
    return;
  }
  std::mt19937_64 g(19);
  for (auto [H, F, T, down] : {std::tuple{256, 256, 37, quant::Type::Q6_K}, {2048, 512, 70, quant::Type::Q6_K}, {512, 256, 9, quant::Type::Q8_0}}) {
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, H))}},
                  {{"gate", gpu::random_quantized(g, "gate", F, H, quant::Type::Q4_K, 1.0 / std::sqrt(H))},
                   {"up", gpu::random_quantized(g, "up", F, H, quant::Type::Q4_K, 1.0 / std::sqrt(H))},
                   {"down", gpu::random_quantized(g, "down", H, F, down, 1.0 / std::sqrt(F))},
                   {"gate_w", weight("gate_w", randn(g, 1, H, 1.0 / std::sqrt(H)))}},
                  {}};
    INFO("H " << H << ", F " << F << ", T " << T << ", down " << quant::type_name(down));
    CHECK(resolved("shared_expert", "vulkan:dense_i8", a) == "vulkan:dense_i8");
    for (auto& [name, e] : compare_with_reference("shared_expert", "vulkan:dense_i8", a)) {
      INFO("rel L2 " << e.rel_l2);
      CHECK(e.finite);
      CHECK(e.rel_l2 <= gpu::route_pack::kI8Tolerance);
      CHECK(e.rel_l2 > 1e-4);
    }
    const vk::ScopedTuning on(device().ctx().profile(), {{"shared_expert.fused.i8", 1}, {"shared_expert.fused.coopmat", 0}, {"shared_expert.fused.dense", 0}});
    CHECK(resolved("shared_expert", "vulkan:fused", a) == "vulkan:dense_i8");
  }
  gpu::OpArgs f32{{{"x", Tensor::from(randn(g, 5, 256))}},
                  {{"gate", weight("gate", randn(g, 64, 256))}, {"up", weight("up", randn(g, 64, 256))},
                   {"down", weight("down", randn(g, 256, 64))}, {"gate_w", weight("gate_w", randn(g, 1, 256))}},
                  {}};
  CHECK(resolved("shared_expert", "vulkan:dense_i8", f32) == "vulkan:fused");
}
