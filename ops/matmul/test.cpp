// matmul: every variant against the reference on the op's cases (cases.cpp), and what is
// special about its kernels.
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

TEST_CASE("vk ops: qgemm_coopmat with emulated matrices, every weight type", "[vk][ops][coopmat]") {
  if (!device().info().shader_float16) {
    WARN("SKIPPED: no shaderFloat16 on " << device().info().name);
    return;
  }
  // Configurations: the defaults (next step prefetched into registers); small tiles; and (matmul) large tiles
  // narrowed for want of workgroups, with four units per step (too many to prefetch: loaded step by step).
  for (const char* op : {"matmul", "lm_head"}) {
    const std::string p = std::string(op) + ".qgemm_coopmat.";
    // "no prefetch": the defaults with nothing held in registers across a step's products (prefetch 0).
    for (const char* config : {"default", "small", "narrowed", "no prefetch"}) {
      std::map<std::string, uint32_t> t{{p + "cm_emulate", 1}};
      if (config == std::string("small")) t.insert({{p + "warp_rows", 1}, {p + "warp_cols", 1}});
      if (config == std::string("no prefetch")) {
        if (op != std::string("matmul")) continue;  // the same kernel: once is enough for CI's time
        t.insert({p + "prefetch", 0});
      }
      if (config == std::string("narrowed")) {
        if (op != std::string("matmul")) continue;  // the same kernel: once is enough for CI's time
        t.insert({{p + "warp_rows", 4}, {p + "warp_cols", 4}, {p + "k_units", 4}, {p + "min_groups", 1u << 20}});
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
