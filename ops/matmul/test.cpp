// matmul: every variant against the reference on the op's cases (cases.cpp), and what is
// special about its kernels.
#include "ops/matmul/qgemm_cm.h"
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_VARIANT("matmul")
HL_TEST_EVERY_VARIANT("lm_head")

TEST_CASE("vk ops: matmul and lm_head, every variant, odd and real shapes", "[vk][ops]") {
  std::mt19937_64 g(3);
  // (T, in, out): odd sizes that are not multiples of any tile, decode and prefill widths, a real projection.
  for (auto [T, K, N] : {std::tuple{1, 37, 53}, {3, 100, 17}, {9, 64, 40}, {33, 129, 70}, {1, 2048, 512}, {20, 2048, 256}}) {
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, K))}}, {{"w", weight("w", randn(g, N, K, 1.0 / std::sqrt(K)))}}, {}};
    // Each variant as the plan runs it: shapes its kernel does not take go where its delegate sends them.
    for (const char* op : {"matmul", "lm_head"})
      for (auto& v : vulkan_variants(op)) require_close(op, resolved(op, v, a), a, 2e-6);
  }
}

// vulkan:qgemm_coopmat with emulated matrices (qgemm_cm_emul.comp: the same tiles, staging and epilogue, each
// invocation holding its share of the accumulators), on every case of the op, with the default tiles and with small
// ones (several subgroup strips, several row and column tiles). A and the weights are rounded to f16: the error is
// real (well above f32 rounding) and within kQgemmTolerance.
// Split K: a few tiles over a long K run as ks partial GEMMs and one pass that adds them; the same result as one pass
// (the reference's tolerance), one more dispatch.
TEST_CASE("vk ops: qgemm_coopmat splits K where the tiles are few", "[vk][ops][coopmat]") {
  if (!device().info().shader_float16) {
    WARN("SKIPPED: no shaderFloat16 on " << device().info().name);
    return;
  }
  std::mt19937_64 g(11);
  const int64_t T = 40, K = 1024, N = 48;
  gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, K))}}, {{"w", weight("w", randn(g, N, K, 1.0 / std::sqrt(K)))}}, {}};
  const std::string p = "matmul.qgemm_coopmat.";
  // 32 x 64 tiles: 2 workgroups of one subgroup. Split by the workgroup target (min_groups 64): never (split_k 1), in
  // 4, in as many parts as K allows (at least 4 steps each: 8); by the subgroup target alone: 8 subgroups wanted (4
  // parts), 2 wanted (none).
  struct Config {
    uint32_t split, min_groups, min_subgroups, dispatches;
  };
  for (const Config c : {Config{1, 64, 0, 1}, Config{4, 64, 0, 2}, Config{64, 64, 0, 2}, Config{8, 0, 8, 2}, Config{8, 0, 2, 1}}) {
    const vk::ScopedTuning tune(device().ctx().profile(),
                                {{p + "cm_emulate", 1}, {p + "warp_rows", 1}, {p + "warp_cols", 1}, {p + "k_units", 1},
                                 {p + "min_groups", c.min_groups}, {p + "min_subgroups", c.min_subgroups}, {p + "split_k", c.split}});
    INFO("split_k " << c.split << ", min_groups " << c.min_groups << ", min_subgroups " << c.min_subgroups);
    const uint64_t before = device().stats().dispatches;
    require_close("matmul", "vulkan:qgemm_coopmat", a, 1e-5);
    device().flush();
    // The reference runs on the host: the device's dispatches are the variant's (weights uploaded by copies).
    CHECK(device().stats().dispatches - before == c.dispatches);
  }
}

// split_first: a 128 x 128 tile (4 x 2 subgroups) over a 128 x 128 output, one workgroup, 2 wanted. Narrowing first
// halves the rows (2 x 2 subgroups, 64 x 128: two workgroups, K whole, one dispatch); asking the split first keeps the
// tile and splits K in 2 (a partial pass and the sum: two dispatches). The same result either way.
TEST_CASE("vk ops: qgemm_coopmat splits K before narrowing with split_first", "[vk][ops][coopmat]") {
  if (!device().info().shader_float16) {
    WARN("SKIPPED: no shaderFloat16 on " << device().info().name);
    return;
  }
  std::mt19937_64 g(12);
  const int64_t T = 128, K = 1024, N = 128;
  gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, K))}}, {{"w", weight("w", randn(g, N, K, 1.0 / std::sqrt(K)))}}, {}};
  const std::string p = "matmul.qgemm_coopmat.";
  for (const uint32_t first : {0u, 1u}) {
    const vk::ScopedTuning tune(device().ctx().profile(),
                                {{p + "cm_emulate", 1}, {p + "warp_rows", 4}, {p + "warp_cols", 2}, {p + "k_units", 1},
                                 {p + "min_groups", 2}, {p + "min_subgroups", 0}, {p + "split_k", 8},
                                 {p + "split_first", first}});
    INFO("split_first " << first);
    const uint64_t before = device().stats().dispatches;
    require_close("matmul", "vulkan:qgemm_coopmat", a, 1e-5);
    device().flush();
    CHECK(device().stats().dispatches - before == (first ? 2u : 1u));
  }
}

TEST_CASE("vk ops: qgemm_coopmat with emulated matrices, every weight type", "[vk][ops][coopmat]") {
  if (!device().info().shader_float16) {
    WARN("SKIPPED: no shaderFloat16 on " << device().info().name);
    return;
  }
  // Configurations: the defaults (next step prefetched into registers); small tiles; and (matmul) large tiles
  // narrowed for want of workgroups, with four units per step (too many to prefetch: loaded step by step).
  for (const char* op : {"matmul", "lm_head"}) {
    const std::string p = std::string(op) + ".qgemm_coopmat.";
    // "no prefetch": the defaults with nothing held in registers across a step's products (prefetch 0); "raw prefetch":
    // Q5_K and Q6_K units' raw words held too (prefetch 7, one unit per step); "early prefetch": those loads issued
    // before the staging barrier (prefetch 15); "columns": K-quant weights read from chunk columns, Q4_K runs and raw
    // words prefetched (7, one unit per step) and, narrowed, split K and four units loaded step by step.
    for (const char* config : {"default", "small", "narrowed", "no prefetch", "raw prefetch", "early prefetch", "columns",
                               "narrowed columns"}) {
      std::map<std::string, uint32_t> t{{p + "cm_emulate", 1}};
      if (config == std::string("small")) t.insert({{p + "warp_rows", 1}, {p + "warp_cols", 1}});
      const bool raw = config == std::string("raw prefetch"), early = config == std::string("early prefetch");
      if (config == std::string("no prefetch") || raw || early) {
        if (op != std::string("matmul")) continue;  // the same kernel: once is enough for CI's time
        t.insert({p + "prefetch", early ? 15u : raw ? 7u : 0u});
        if (raw || early) t.insert({p + "k_units", 1});  // raw words: one unit per step
      }
      const bool cols = config == std::string("columns"), ncols = config == std::string("narrowed columns");
      if (config == std::string("narrowed") || ncols) {
        if (op != std::string("matmul")) continue;  // the same kernel: once is enough for CI's time
        t.insert({{p + "warp_rows", 4}, {p + "warp_cols", 4}, {p + "k_units", 4}, {p + "min_groups", 1u << 20}});
      }
      if (cols || ncols) {
        if (op != std::string("matmul")) continue;
        t.insert({p + "columns", 1});
        if (cols) t.insert({{p + "prefetch", 7}, {p + "k_units", 1}});
      }
      const vk::ScopedTuning tune(device().ctx().profile(), t);
      INFO(op << " " << config << " tiles");
      CHECK(check_variant_on_cases(op, "vulkan:qgemm_coopmat") > 1e-5);
    }
  }
}


// vulkan:qgemm, the same kernel on scalar FMAs (qgemm_sc.comp: f32 tiles, K-quant units decoded through f16, each
// invocation 4 x 8 outputs), on every case of the op: the default tiles, small ones (8 x 64: several row and column
// tiles, partial ones; two units per step), nothing prefetched, and a K split into partial GEMMs (min_groups far
// above the tiles).
TEST_CASE("vk ops: qgemm on scalar FMAs, every weight type", "[vk][ops]") {
  if (!device().info().shader_float16) {
    WARN("SKIPPED: no shaderFloat16 on " << device().info().name);
    return;
  }
  const std::string p = "matmul.qgemm.";
  for (const char* config : {"default", "small", "no prefetch", "split"}) {
    std::map<std::string, uint32_t> t;
    if (config == std::string("small")) t = {{p + "thread_rows", 2}, {p + "thread_cols", 8}, {p + "k_units", 2}};
    if (config == std::string("no prefetch")) t = {{p + "prefetch", 0}};
    if (config == std::string("split")) t = {{p + "min_groups", 1u << 20}, {p + "split_k", 4}, {p + "k_units", 1}};
    const vk::ScopedTuning tune(device().ctx().profile(), t);
    INFO(config << " tiles");
    CHECK(check_variant_on_cases("matmul", "vulkan:qgemm") > 1e-7);  // K-quant weights: the f16 rounding is real
  }
}

// vulkan:qnarrow at the gates' real shape (q4_K 2048 -> 32) and the router's (f32 2048 -> 256), in other tilings: fewer
// rows per workgroup than the weight has, more (idle invocations), a token count that leaves a partial workgroup, units
// per row that the invocations sharing a row do not divide (65 f32 units; 16 q6_K units over 32 shares: half idle).
TEST_CASE("vk ops: qnarrow at the gates' and router's shapes, other tilings", "[vk][ops]") {
  std::mt19937_64 g(29);
  const std::string p = "matmul.qnarrow.";
  struct Shape {
    int64_t T, K, N;
    quant::Type type;
  };
  for (const Shape s : {Shape{37, 2048, 32, quant::Type::Q4_K}, Shape{9, 2048, 256, quant::Type::F32}, Shape{5, 512, 40, quant::Type::Q6_K},
                        Shape{6, 2080, 24, quant::Type::F32}}) {
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, s.T, s.K))}},
                  {{"w", s.type == quant::Type::F32 ? weight("w", randn(g, s.N, s.K, 1.0 / std::sqrt(s.K)))
                                                    : gpu::random_quantized(g, "w", s.N, s.K, s.type, 1.0 / std::sqrt(s.K))}},
                  {}};
    for (const auto& t : std::vector<std::map<std::string, uint32_t>>{
             {}, {{p + "wg", 64}, {p + "rows", 16}, {p + "tokens", 3}}, {{p + "wg", 128}, {p + "rows", 64}, {p + "tokens", 4}},
             {{p + "wg", 256}, {p + "rows", 8}, {p + "tokens", 2}}}) {
      const vk::ScopedTuning tune(device().ctx().profile(), t);
      INFO("T " << s.T << ", K " << s.K << ", N " << s.N << ", " << t.size() << " tunables set");
      require_close("matmul", "vulkan:qnarrow", a, 1e-5);
    }
  }
  // Bad tunables: a clear error, not a wrong kernel.
  gpu::OpArgs a{{{"x", Tensor::from(randn(g, 4, 64))}}, {{"w", weight("w", randn(g, 8, 64))}}, {}};
  const vk::ScopedTuning tune(device().ctx().profile(), {{p + "wg", 64}, {p + "rows", 48}});
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  CHECK_THROWS_WITH(gpu::Registry::get().variant("matmul", "vulkan:qnarrow").run(ctx, a), Catch::Contains("a divisor of wg"));
}

// Where vulkan:auto sends prompt chunks: few output rows to qnarrow (narrow_rows), f32 weights to qgemm (f32_qgemm) or,
// where cooperative matrices run the plan's other prompt GEMMs, to qgemm_coopmat (f32_coopmat); short chunks and rows of
// partial 64-value steps elsewhere. lavapipe's profile sets narrow_rows and f32_qgemm to 0 (its goldens): set here.
TEST_CASE("vk ops: vulkan:auto's picks for prompt chunks", "[vk][ops]") {
  std::mt19937_64 g(31);
  const auto args = [&](int64_t T, int64_t K, int64_t N, bool quantized) {
    return gpu::OpArgs{{{"x", Tensor::from(randn(g, T, K))}},
                       {{"w", quantized ? gpu::random_quantized(g, "w", N, K, quant::Type::Q4_K, 0.05) : weight("w", randn(g, N, K))}},
                       {}};
  };
  const std::string a = "matmul.auto.";
  const bool cm = gpu::qgemm_unavailable(device(), "matmul.qgemm_coopmat.").empty();
  const bool sc = gpu::qgemm_unavailable(device(), "matmul.qgemm.", true).empty();
  {
    const vk::ScopedTuning tune(device().ctx().profile(), {{a + "narrow_rows", 0}, {a + "f32_qgemm", 0}, {a + "f32_coopmat", 0}, {a + "qgemm", 1}});
    CHECK(resolved("matmul", "vulkan:auto", args(20, 256, 32, true)) == (cm ? "vulkan:qgemm_coopmat" : sc ? "vulkan:qgemm" : "vulkan:qcols"));
    CHECK(resolved("matmul", "vulkan:auto", args(20, 256, 256, false)) == "vulkan:tiled");
  }
  const vk::ScopedTuning tune(device().ctx().profile(), {{a + "narrow_rows", 64}, {a + "f32_qgemm", 1}, {a + "qgemm", 0}});
  CHECK(resolved("matmul", "vulkan:auto", args(20, 256, 32, true)) == "vulkan:qnarrow");
  CHECK(resolved("matmul", "vulkan:auto", args(20, 256, 64, false)) == "vulkan:qnarrow");
  CHECK(resolved("matmul", "vulkan:auto", args(20, 256, 96, true)) == (cm ? "vulkan:qgemm_coopmat" : "vulkan:qcols"));
  CHECK(resolved("matmul", "vulkan:auto", args(1, 256, 32, true)) == "vulkan:qmatvec_direct");
  CHECK(resolved("matmul", "vulkan:auto", args(5, 256, 256, false)) == "vulkan:rowdot");
  CHECK(resolved("matmul", "vulkan:auto", args(20, 96, 256, false)) == "vulkan:tiled");
  CHECK(resolved("matmul", "vulkan:auto", args(20, 256, 256, false)) ==
        (cm ? "vulkan:qgemm_coopmat" : sc ? "vulkan:qgemm" : "vulkan:tiled"));
}
