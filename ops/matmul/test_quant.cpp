// Vulkan variants on quantized (ggml block) weights against the reference, on fresh random inputs. The
// weights are quantized_source()s: the kernels decode the raw blocks, the reference reads the dequantized
// rows (bit-exact dequantizers, reference/quant/blocks.cpp), so both compute the oracle's function of the
// same f32 weights.
// Tolerances: what remains is f32 summation in another order than Eigen's. qcols dequantizes bit-exactly and
// sums up to 2048 products per output (in 64-term partial sums); qmatvec and the expert kernels factor each
// 16-value run's scale out (mul * sum(q x) - sub * sum(x)), which rounds differently again but at the same
// level (both terms are of the size of the result: sub centres q). Rounding ~ sqrt(n) * 6e-8 per dot,
// independent across outputs: measured at most 4.5e-7 relative L2 for matmul (any type, K up to 4096), so
// 1e-6; the experts chain three such products through silu and apply the router weight before down (as the
// f32 kernels do, test_vk_ops_moe.cpp): measured at most 6.3e-7, so 2e-6 as for f32 experts.
#include "model/quant_source.h"
#include "variant_check.h"

using namespace hl;
using namespace hl::test;
using quant::Type;

namespace {

const std::vector<Type> kTypes{Type::Q4_K, Type::Q5_K, Type::Q6_K, Type::Q8_0, Type::F16};

WeightRef qweight(const std::string& name, const Mat<float>& m, Type t) { return whole(quantized_source(name, m, t)); }

gpu::OpArgs matmul_args(std::mt19937_64& g, int T, int K, int N, Type t) {
  return {{{"x", Tensor::from(randn(g, T, K))}}, {{"w", qweight("w", randn(g, N, K, 1.0 / std::sqrt(K)), t)}}, {}};
}

Tensor ids(const std::vector<int32_t>& v, int64_t rows, int64_t cols) {
  IMat m(rows, cols);
  std::copy(v.begin(), v.end(), m.data());
  return Tensor::from_i32(std::move(m));
}

constexpr double kTol = 1e-6, kExpertTol = 2e-6;

}  // namespace

TEST_CASE("vk ops: quantized matmul, qmatvec and auto, every type", "[vk][ops][quant]") {
  std::mt19937_64 g(21);
  for (Type t : kTypes)
    for (auto [K, N] : {std::pair{256, 37}, {512, 5}, {2048, 67}})
      for (int T : {1, 3}) {
        INFO(quant::type_name(t) << " K " << K << " N " << N << " T " << T);
        const gpu::OpArgs a = matmul_args(g, T, K, N, t);
        for (const char* op : {"matmul", "lm_head"})
          for (const char* v : {"vulkan:qmatvec", "vulkan:qmatvec_direct", "vulkan:auto"}) require_close(op, v, a, kTol);
      }
}

// qmatvec_i8 and qmatvec_i8_staged round x to 8 bits per 32 values (their own precision, see the
// registration in vk_quant.cpp): held to 2e-2 relative L2 by require_close; here also checked not to be
// exact-by-accident (the rounding is real, so the error is well above f32 rounding).
TEST_CASE("vk ops: quantized matmul, qmatvec_i8 on every block type", "[vk][ops][quant]") {
  std::mt19937_64 g(27);
  for (Type t : {Type::Q4_K, Type::Q5_K, Type::Q6_K, Type::Q8_0})
    for (auto [K, N] : {std::pair{256, 37}, {512, 5}, {2048, 67}, {4096, 9}})
      for (int T : {1, 3, 6}) {  // 6 > the default 4 tokens per pass
        INFO(quant::type_name(t) << " K " << K << " N " << N << " T " << T);
        const gpu::OpArgs a = matmul_args(g, T, K, N, t);
        for (const char* op : {"matmul", "lm_head"})
          for (const char* v : {"vulkan:qmatvec_i8", "vulkan:qmatvec_i8_staged"}) {
            require_close(op, v, a, 2e-2);
            for (auto& [name, e] : compare_with_reference(op, v, a)) CHECK(e.rel_l2 > 1e-4);
          }
      }
  // Several slots per lane per step (a row's last step partly past its slots).
  for (Type t : {Type::Q6_K, Type::Q8_0}) {
    const gpu::OpArgs a = matmul_args(g, 2, 768, 37, t);
    for (uint32_t slots : {2u, 3u, 4u}) {
      INFO(quant::type_name(t) << " slots " << slots);
      vk::ScopedTuning s(device().ctx().profile(), {{"matmul.qmatvec_i8.slots", slots}});
      require_close("matmul", "vulkan:qmatvec_i8", a, 2e-2);
    }
  }
  // The staged kernel: tiles of 1, 3 or 8 rows (37 rows: a partial last tile), one to many tiles per
  // worker (grid-stride, 1 to 3 tiles loaded ahead while one is decoded; rounds cut short), workers the
  // workgroup or each subgroup (local), tiles starting off 16-byte units,
  // 1 to 4 slots per lane (several rows per subgroup; a lane's last slots past the row's).
  for (Type t : {Type::Q6_K, Type::Q8_0, Type::Q4_K}) {
    const gpu::OpArgs a = matmul_args(g, 1, 768, 37, t);
    for (auto [rows, groups, slots, depth, local] :
         {std::tuple{1u, 1u, 1u, 1u, 0u}, {3u, 2u, 2u, 3u, 0u}, {8u, 1024u, 1u, 2u, 0u}, {8u, 3u, 4u, 1u, 0u},
          {5u, 2u, 3u, 2u, 0u}, {2u, 1u, 1u, 3u, 0u}, {1u, 1u, 1u, 1u, 1u}, {2u, 2u, 2u, 3u, 1u}, {3u, 1024u, 1u, 2u, 1u}}) {
      INFO(quant::type_name(t) << " rows " << rows << " groups " << groups << " slots " << slots << " depth " << depth
                               << " local " << local);
      vk::ScopedTuning s(device().ctx().profile(), {{"matmul.qmatvec_i8_staged.rows", rows},
                                                    {"matmul.qmatvec_i8_staged.groups", groups},
                                                    {"matmul.qmatvec_i8_staged.slots", slots},
                                                    {"matmul.qmatvec_i8_staged.depth", depth},
                                                    {"matmul.qmatvec_i8_staged.local", local}});
      require_close("matmul", "vulkan:qmatvec_i8_staged", a, 2e-2);
    }
  }
  const gpu::OpArgs f16 = matmul_args(g, 1, 256, 8, Type::F16);
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  gpu::OpArgs got = f16;
  for (const char* v : {"vulkan:qmatvec_i8", "vulkan:qmatvec_i8_staged"})
    REQUIRE_THROWS_WITH(gpu::Registry::get().variant("matmul", v).run(ctx, got), Catch::Contains("is f16"));
}

TEST_CASE("vk ops: quantized matmul, qcols over token counts and every type", "[vk][ops][quant]") {
  std::mt19937_64 g(22);
  for (Type t : kTypes)
    for (auto [K, N] : {std::pair{256, 37}, {512, 19}, {2048, 33}})
      for (int T : {1, 3, 8, 40, 65}) {
        if (K == 2048 && T != 40) continue;  // lavapipe time: one wide case per type
        INFO(quant::type_name(t) << " K " << K << " N " << N << " T " << T);
        const gpu::OpArgs a = matmul_args(g, T, K, N, t);
        require_close("matmul", "vulkan:qcols", a, kTol);
        if (T == 8) require_close("lm_head", "vulkan:auto", a, kTol);  // auto's prompt path
      }
}

TEST_CASE("vk ops: quantized matmul, other tunings", "[vk][ops][quant]") {
  std::mt19937_64 g(23);
  for (Type t : {Type::Q6_K, Type::Q8_0}) {  // the 2-byte aligned blocks
    const gpu::OpArgs a = matmul_args(g, 65, 512, 37, t);
    for (uint32_t cols : {1u, 8u, 16u, 40u, 64u}) {
      vk::ScopedTuning s(device().ctx().profile(), {{"matmul.qcols.max_cols", cols}});
      require_close("matmul", "vulkan:qcols", a, kTol);
    }
    for (auto [rows, tm, units] : {std::tuple{16u, 1u, 3u}, {64u, 4u, 2u}}) {
      vk::ScopedTuning s(device().ctx().profile(), {{"matmul.qcols.rows", rows}, {"matmul.qcols.tm", tm}, {"matmul.qcols.units", units}});
      require_close("matmul", "vulkan:qcols", a, kTol);
    }
    const gpu::OpArgs d = matmul_args(g, 2, 512, 37, t);
    for (auto [rows, pass] : {std::pair{1u, 1u}, {3u, 2u}, {7u, 3u}, {64u, 4u}}) {
      vk::ScopedTuning s(device().ctx().profile(), {{"matmul.qmatvec.rows", rows}, {"matmul.qmatvec.pass", pass}});
      require_close("matmul", "vulkan:qmatvec", d, kTol);
    }
  }
  // qmatvec_direct: rows per pass that do not divide N (a last pass past the rows), units per lane per step
  // beyond a row's units (1280 values: 40 units, the last step partly past them), and a capped grid (passes
  // walked grid-stride, x staged once for several), two tokens (x restaged).
  for (Type t : {Type::Q4_K, Type::Q5_K, Type::Q6_K, Type::Q8_0}) {
    const gpu::OpArgs d = matmul_args(g, 2, 1280, 37, t);
    for (auto [wg, rows, units, groups] : {std::tuple{64u, 1u, 1u, 0u}, {128u, 3u, 2u, 0u}, {64u, 5u, 4u, 1u},
                                          {256u, 8u, 3u, 2u}, {32u, 2u, 7u, 3u}}) {
      INFO(quant::type_name(t) << " wg " << wg << " rows " << rows << " units " << units << " groups " << groups);
      vk::ScopedTuning s(device().ctx().profile(), {{"matmul.qmatvec_direct.wg", wg},
                                                    {"matmul.qmatvec_direct.rows", rows},
                                                    {"matmul.qmatvec_direct.units", units},
                                                    {"matmul.qmatvec_direct.groups", groups}});
      require_close("matmul", "vulkan:qmatvec_direct", d, kTol);
    }
  }
}

TEST_CASE("vk ops: quantized matmul, the model's shapes at decode", "[vk][ops][quant]") {
  std::mt19937_64 g(24);
  // 2048 -> 512 (an expert's width), 2048 -> 4096 (z), 4096 -> 2048 (out, 2304-byte q4_K rows: fewer staged).
  for (auto [K, N, t] : {std::tuple{2048, 512, Type::Q6_K}, {2048, 4096, Type::Q4_K}, {4096, 2048, Type::Q8_0}}) {
    INFO(quant::type_name(t) << " " << K << " -> " << N);
    const gpu::OpArgs a = matmul_args(g, 1, K, N, t);
    for (const char* v : {"vulkan:auto", "vulkan:qmatvec_direct"}) require_close("matmul", v, a, kTol);
  }
}

// qmatvec_planar(_i8) on q6_K in planar rows: block counts that leave the rows off a 16-byte stride (1, 3:
// padded rows) and that need fewer lanes than the subgroup (1 block = 4 chunks) or several chunks per lane
// (16 blocks = 64 chunks over lavapipe's 8 lanes: x reloaded, beyond 4 chunks in registers), row groups that
// do not divide N, a capped grid, several tokens. _i8 rounds x to 8 bits: 2e-2 (as qmatvec_i8), and well
// above f32 rounding (the rounding is real).
TEST_CASE("vk ops: qmatvec_planar on q6_K", "[vk][ops][quant]") {
  std::mt19937_64 g(28);
  for (auto [K, N, T] : {std::tuple{256, 37, 1}, {768, 19, 2}, {2048, 67, 1}, {4096, 9, 3}}) {
    const gpu::OpArgs a = matmul_args(g, T, K, N, Type::Q6_K);
    for (auto [wg, rows, groups] : {std::tuple{64u, 1u, 0u}, {128u, 3u, 0u}, {32u, 2u, 1u}}) {
      INFO("K " << K << " N " << N << " T " << T << " wg " << wg << " rows " << rows << " groups " << groups);
      vk::ScopedTuning s(device().ctx().profile(), {{"matmul.qmatvec_planar.wg", wg},
                                                    {"matmul.qmatvec_planar.rows", rows},
                                                    {"matmul.qmatvec_planar.groups", groups},
                                                    {"matmul.qmatvec_planar_i8.wg", wg},
                                                    {"matmul.qmatvec_planar_i8.rows", rows},
                                                    {"matmul.qmatvec_planar_i8.groups", groups}});
      require_close("matmul", "vulkan:qmatvec_planar", a, kTol);
      require_close("matmul", "vulkan:qmatvec_planar_i8", a, 2e-2);
      double worst = 0;
      for (auto& [name, e] : compare_with_reference("matmul", "vulkan:qmatvec_planar_i8", a)) worst = std::max(worst, e.rel_l2);
      CHECK(worst > 1e-4);
    }
    require_close("lm_head", "vulkan:qmatvec_planar", a, kTol);
    vk::ScopedTuning s(device().ctx().profile(), {{"matmul.auto.decode_planar_rows", 1}});  // auto's planar path
    require_close("lm_head", "vulkan:auto", a, kTol);
  }
  // Other block types are refused by name.
  const gpu::OpArgs q4 = matmul_args(g, 1, 256, 8, Type::Q4_K);
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  for (const char* v : {"vulkan:qmatvec_planar", "vulkan:qmatvec_planar_i8"}) {
    gpu::OpArgs got = q4;
    REQUIRE_THROWS_WITH(gpu::Registry::get().variant("matmul", v).run(ctx, got), Catch::Contains("is q4_K"));
  }
}

TEST_CASE("vk ops: quantized variants refuse f32 weights", "[vk][ops][quant]") {
  std::mt19937_64 g(25);
  gpu::OpArgs a{{{"x", Tensor::from(randn(g, 1, 64))}}, {{"w", weight("w", randn(g, 8, 64))}}, {}};
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  for (const char* v : {"vulkan:qmatvec", "vulkan:qmatvec_i8", "vulkan:qmatvec_i8_staged", "vulkan:qcols",
                        "vulkan:qmatvec_planar", "vulkan:qmatvec_planar_i8"})
    REQUIRE_THROWS_WITH(gpu::Registry::get().variant("matmul", v).run(ctx, a), Catch::Contains("is f32"));
}

TEST_CASE("vk ops: moe_experts and shared_expert on quantized experts", "[vk][ops][quant]") {
  std::mt19937_64 g(26);
  // (gate, up, down) types: the GGUF mix (q4_K, q6_K down), different gate and up types, and f32 down beside
  // quantized gate/up (read as raw f32 rows).
  const std::vector<std::array<Type, 3>> mixes{
      {Type::Q4_K, Type::Q4_K, Type::Q6_K}, {Type::Q5_K, Type::Q8_0, Type::F16}, {Type::Q4_K, Type::Q4_K, Type::F32}};
  auto w = [&](const std::string& name, int64_t r, int64_t c, Type t) {
    Mat<float> m = randn(g, r, c, 1.0 / std::sqrt(double(c)));
    return t == Type::F32 ? weight(name, std::move(m)) : qweight(name, m, t);
  };
  const int E = 8, k = 2, H = 256, F = 256;
  for (auto& mix : mixes)
    for (int T : {1, 5}) {
      INFO(quant::type_name(mix[0]) << "/" << quant::type_name(mix[1]) << "/" << quant::type_name(mix[2]) << " T " << T);
      // Expert 0 is in every token's route, expert E-1 in none.
      std::vector<int32_t> route;
      for (int t = 0; t < T; ++t) route.insert(route.end(), {0, int32_t(1 + g() % uint64_t(E - 2))});
      Mat<float> rw = randn(g, T, k).cwiseAbs();
      rw = (rw.array().colwise() / rw.rowwise().sum().array()).matrix();
      gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, H))}, {"expert", ids(route, T, k)}, {"weight", Tensor::from(rw)}},
                    {{"gate", w("gate", E * F, H, mix[0])}, {"up", w("up", E * F, H, mix[1])}, {"down", w("down", E * H, F, mix[2])}},
                    {{"n_experts", E}}};
      require_close("moe_experts", "vulkan:per_token", a, kExpertTol);
      gpu::OpArgs s{{{"x", a.in("x")}},
                    {{"gate", w("sgate", F, H, mix[0])}, {"up", w("sup", F, H, mix[1])}, {"down", w("sdown", H, F, mix[2])},
                     {"gate_w", weight("gate_w", randn(g, 1, H, 1.0 / std::sqrt(H)))}},
                    {}};
      require_close("shared_expert", "vulkan:fused", s, kExpertTol);
    }
  // The model's widths (H = 2048, F = 512), four experts, one token.
  gpu::OpArgs a{{{"x", Tensor::from(randn(g, 1, 2048))}, {"expert", ids({3, 1}, 1, 2)}, {"weight", Tensor::from(Mat<float>{{0.7f, 0.3f}})}},
                {{"gate", w("gate", 4 * 512, 2048, Type::Q4_K)}, {"up", w("up", 4 * 512, 2048, Type::Q4_K)},
                 {"down", w("down", 4 * 2048, 512, Type::Q6_K)}},
                {{"n_experts", 4}}};
  require_close("moe_experts", "vulkan:per_token", a, kExpertTol);
}

// qmatvec_direct with add_rmsnorm folded in (the plan executor's folded norms): the projection of
// rmsnorm(x + a (+ b)) * gain against the reference add_rmsnorm then the reference matmul, and (norm_out) the
// sum and normed rows it writes against add_rmsnorm's. The same f32 operations as add_rmsnorm.comp but the
// sum of squares in another order: rounding-level differences (1e-6, as matmul).
TEST_CASE("vk ops: qmatvec_direct with add_rmsnorm folded in", "[vk][ops][quant]") {
  std::mt19937_64 g(28);
  const auto& reg = gpu::Registry::get();
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  for (Type t : {Type::Q4_K, Type::Q6_K, Type::F32})
    for (int T : {1, 2})
      for (bool two : {false, true})
        for (bool out : {false, true}) {
          const int K = 1280, N = 37;
          INFO(quant::type_name(t) << " T " << T << " two " << two << " out " << out);
          const Mat<float> wm = randn(g, N, K, 1.0 / std::sqrt(K));
          const WeightRef w = t == Type::F32 ? weight("w", wm) : qweight("w", wm, t);
          const WeightRef gain = weight("gain", Mat<float>(randn(g, 1, K).array() * 0.2f + 1.0f));
          const Tensor x = Tensor::from(randn(g, T, K)), a = Tensor::from(randn(g, T, K)), b = Tensor::from(randn(g, T, K));
          gpu::OpArgs norm{{{"x", x.clone()}, {"a", a.clone()}}, {{"gain", gain}}, {{"eps", 1e-6}}};
          if (two) norm.set("b", b.clone());
          reg.variant("add_rmsnorm", "reference").run(ctx, norm);
          gpu::OpArgs want{{{"x", norm.t.at("n")}}, {{"w", w}}, {}};
          reg.variant("matmul", "reference").run(ctx, want);
          gpu::OpArgs got{{{"norm_x", x.clone()}, {"norm_a", a.clone()}},
                          {{"w", w}, {"norm_gain", gain}},
                          {{"norm_eps", 1e-6}, {"norm_out", out ? 1.0 : 0.0}}};
          if (two) got.set("norm_b", b.clone());
          reg.variant("matmul", "vulkan:qmatvec_direct").run(ctx, got);
          CHECK(rel_l2(got.t.at("y").f32(), want.t.at("y").f32()) < kTol);
          CHECK(got.t.count("sum") == (out ? 1u : 0u));
          if (out) {
            CHECK(rel_l2(got.t.at("sum").f32(), norm.t.at("y").f32()) < kTol);
            CHECK(rel_l2(got.t.at("normed").f32(), norm.t.at("n").f32()) < kTol);
          }
        }
  require_no_validation_messages();
}
