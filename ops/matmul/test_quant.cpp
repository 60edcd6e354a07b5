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
// f32 kernels do, ops/moe_experts/test.cpp): measured at most 6.3e-7, so 2e-6 as for f32 experts.
#include <cstring>

#include "model/quant_source.h"
#include "ops/matmul/quant_rows.h"
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

constexpr double kTol = 1e-6;

}  // namespace

TEST_CASE("vk ops: quantized matmul, qmatvec and auto, every type", "[vk][ops][quant]") {
  std::mt19937_64 g(21);
  for (Type t : kTypes)
    for (auto [K, N] : {std::pair{256, 37}, {512, 5}, {2048, 67}})
      for (int T : {1, 3}) {
        INFO(quant::type_name(t) << " K " << K << " N " << N << " T " << T);
        const gpu::OpArgs a = matmul_args(g, T, K, N, t);
        for (const std::string op : {"matmul", "lm_head"}) {
          {  // f32 products: x as it is
            const vk::ScopedTuning f32(device().ctx().profile(), {{op + ".qmatvec_direct.x16", 0}});
            for (const char* v : {"vulkan:qmatvec", "vulkan:qmatvec_direct"}) require_close(op, v, a, kTol);
          }
          // The default: K-quants with x as 16-bit fixed point (integer dot products), held to kX16Tolerance, and
          // really rounded (well above f32 rounding); other types keep the f32 products.
          for (const char* v : {"vulkan:qmatvec_direct", "vulkan:auto"}) require_close(op, v, a, kTol);
          const bool x16 = device().info().integer_dot_product && t != Type::Q8_0 && t != Type::F16;
          for (auto& [name, e] : compare_with_reference(op, "vulkan:qmatvec_direct", a))
            CHECK((x16 ? e.rel_l2 > kTol : e.rel_l2 <= kTol));
        }
      }
}

// qmatvec_i8_staged rounds x to 8 bits per 32 values (its own precision, see the registration in
// vulkan_quant.cpp): held to 2e-2 relative L2 by require_close; here also checked not to be exact-by-accident (the
// rounding is real, so the error is well above f32 rounding).
TEST_CASE("vk ops: quantized matmul, qmatvec_i8_staged on every block type", "[vk][ops][quant]") {
  std::mt19937_64 g(27);
  for (Type t : {Type::Q4_K, Type::Q5_K, Type::Q6_K, Type::Q8_0})
    for (auto [K, N] : {std::pair{256, 37}, {512, 5}, {2048, 67}, {4096, 9}})
      for (int T : {1, 3, 6}) {  // 6 > the default 4 tokens per pass
        INFO(quant::type_name(t) << " K " << K << " N " << N << " T " << T);
        const gpu::OpArgs a = matmul_args(g, T, K, N, t);
        for (const char* op : {"matmul", "lm_head"})
          for (const char* v : {"vulkan:qmatvec_i8_staged"}) {
            require_close(op, v, a, 2e-2);
            for (auto& [name, e] : compare_with_reference(op, v, a)) CHECK(e.rel_l2 > 1e-4);
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
  for (const char* v : {"vulkan:qmatvec_i8_staged"})
    REQUIRE_THROWS_WITH(gpu::Registry::get().variant("matmul", v).run(ctx, got), Catch::Contains("is f16"));
}

// qgemm_i8 rounds x to 8 bits per 32 values as qmatvec_i8_staged does (2e-2, and checked really rounded): every block
// type, one token to several row tiles, partial row and column tiles, K from one slot step to 4096, on the default tile
// and on small ones (several row and column tiles, 1 to 4 slots per step, slots not dividing the row's: fewer), with the
// next step prefetched into registers (A and Q4_K / Q5_K words, where their slots hold a step) and without, the products of
// rows past a tile's end skipped (skip_rows) and not.
TEST_CASE("vk ops: quantized matmul, qgemm_i8 on every block type and tile", "[vk][ops][quant]") {
  if (!device().info().integer_dot_product) {
    WARN("SKIPPED: no shader integer dot product on " << device().info().name);
    return;
  }
  std::mt19937_64 g(29);
  for (Type t : {Type::Q4_K, Type::Q5_K, Type::Q6_K, Type::Q8_0})
    for (auto [T, K, N] : {std::tuple{1, 256, 37}, {70, 512, 300}, {40, 2048, 67}, {9, 4096, 20}}) {
      const gpu::OpArgs a = matmul_args(g, T, K, N, t);
      for (auto [rows, cols, slots, prefetch, skip] :
           {std::tuple{16u, 16u, 2u, 1u, 0u}, {16u, 16u, 1u, 0u, 1u}, {2u, 4u, 1u, 1u, 1u}, {4u, 2u, 4u, 0u, 0u}, {3u, 5u, 3u, 1u, 1u},
            {8u, 8u, 2u, 1u, 0u}}) {
        INFO(quant::type_name(t) << " T " << T << " K " << K << " N " << N << " tile " << rows << " x " << cols << " slots "
                                 << slots << " prefetch " << prefetch << " skip_rows " << skip);
        for (const std::string op : {"matmul", "lm_head"}) {
          vk::ScopedTuning s(device().ctx().profile(), {{op + ".qgemm_i8.thread_rows", rows},
                                                        {op + ".qgemm_i8.thread_cols", cols},
                                                        {op + ".qgemm_i8.slots", slots},
                                                        {op + ".qgemm_i8.prefetch", prefetch},
                                                        {op + ".qgemm_i8.skip_rows", skip}});
          require_close(op, "vulkan:qgemm_i8", a, 2e-2);
          for (auto& [name, e] : compare_with_reference(op, "vulkan:qgemm_i8", a)) CHECK(e.rel_l2 > 1e-4);
        }
      }
    }
  // min_groups: rows per tile halved down to 4 (one invocation row) while the grid is smaller than asked.
  for (Type t : {Type::Q4_K, Type::Q6_K}) {
    const gpu::OpArgs a = matmul_args(g, 70, 512, 300, t);
    for (uint32_t min_groups : {8u, 1u << 20}) {
      INFO(quant::type_name(t) << " min_groups " << min_groups);
      vk::ScopedTuning s(device().ctx().profile(), {{"matmul.qgemm_i8.min_groups", min_groups}});
      require_close("matmul", "vulkan:qgemm_i8", a, 2e-2);
    }
  }
  std::mt19937_64 g2(30);
  // vulkan:auto takes it for prompt chunks of the types it reads where asked (i8 1), not for decode or f16 weights.
  for (const std::string op : {"matmul", "lm_head"}) {
    const vk::ScopedTuning on(device().ctx().profile(), {{"matmul.auto.i8", 1}, {"matmul.auto.coopmat", 0}, {"matmul.auto.narrow_rows", 0}});
    for (Type t : {Type::Q4_K, Type::Q6_K, Type::Q8_0, Type::F16})
      for (int T : {1, 20}) {
        const gpu::OpArgs a = matmul_args(g2, T, 256, 70, t);
        const std::string v = resolved(op, "vulkan:auto", a);
        INFO(op << " " << quant::type_name(t) << " T " << T << ": " << v);
        CHECK((v == "vulkan:qgemm_i8") == (T > 1 && t != Type::F16));
        if (v == "vulkan:qgemm_i8") require_close(op, "vulkan:auto", a, 2e-2);
      }
  }
  const gpu::OpArgs f16 = matmul_args(g2, 3, 256, 8, Type::F16);
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  gpu::OpArgs got = f16;
  REQUIRE_THROWS_WITH(gpu::Registry::get().variant("matmul", "vulkan:qgemm_i8").run(ctx, got), Catch::Contains("is f16"));
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

// qmatvec_planar(_i8) on q6_K in planar rows (x16 and f32 products): block counts that leave the rows off a 16-byte stride (1, 3:
// padded rows) and that need fewer lanes than the subgroup (1 block = 4 chunks) or several chunks per lane
// (16 blocks = 64 chunks over lavapipe's 8 lanes: x reloaded, beyond 4 chunks in registers), row groups that
// do not divide N, a capped grid, several tokens. _i8 rounds x to 8 bits: 2e-2 (as qmatvec_i8_staged), and well
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
      {  // exact f32 products, then the default: x as 16-bit fixed point where the device has integer dot products,
         // held to the variant's kX16Tolerance and really rounded (above f32 rounding)
        const vk::ScopedTuning f32(device().ctx().profile(), {{"matmul.qmatvec_planar.x16", 0}});
        for (auto& [name, e] : compare_with_reference("matmul", "vulkan:qmatvec_planar", a)) CHECK(e.rel_l2 <= kTol);
      }
      require_close("matmul", "vulkan:qmatvec_planar", a, kTol);
      for (auto& [name, e] : compare_with_reference("matmul", "vulkan:qmatvec_planar", a))
        CHECK((device().info().integer_dot_product ? e.rel_l2 > kTol : e.rel_l2 <= kTol));
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
  for (const char* v : {"vulkan:qmatvec", "vulkan:qmatvec_i8_staged", "vulkan:qcols",
                        "vulkan:qmatvec_planar", "vulkan:qmatvec_planar_i8"})
    REQUIRE_THROWS_WITH(gpu::Registry::get().variant("matmul", v).run(ctx, a), Catch::Contains("is f32"));
}

// Chunk columns (WeightStore::device_chunk_columns, moe_block's down_columns): one copy per weight, in the group it was
// first asked for; other groups are refused, not served the cached layout. Byte 16 c of a group is chunk c / group of
// row c % group (within one block): checked against the raw rows.
TEST_CASE("vk ops: chunk columns keep their group", "[vk][ops][quant]") {
  std::mt19937_64 g(27);
  const WeightRef w = qweight("w", randn(g, 8, 256), Type::Q4_K);
  gpu::WeightStore ws(&device());
  const Tensor cols = ws.device_chunk_columns(w, 4);
  const IMat& got = cols.i32();
  std::vector<uint8_t> raw(8 * 144);
  w.read_raw_rows(0, 8, raw.data());
  const auto* b = reinterpret_cast<const uint8_t*>(got.data());
  for (int grp = 0; grp < 2; ++grp)
    for (int c = 0; c < 9; ++c)  // 144 bytes: 9 chunks
      for (int r = 0; r < 4; ++r)
        CHECK(std::memcmp(b + size_t(grp) * 4 * 9 * 16 + (size_t(c) * 4 + r) * 16, raw.data() + (grp * 4 + r) * 144 + c * 16, 16) == 0);
  CHECK(ws.device_chunk_columns(w, 4).id() == cols.id());
  {
    // Cached under the device's weight budget like the raw rows, not the host cache's: with the host budget at 0 the
    // columns are still made once (a full-size routed stack's columns outgrow the host default).
    const char* was = std::getenv("HYBRIDLAB_WEIGHT_CACHE_MB");
    const std::string keep = was ? was : "";
    setenv("HYBRIDLAB_WEIGHT_CACHE_MB", "0", 1);
    gpu::WeightStore small(&device());
    if (was) setenv("HYBRIDLAB_WEIGHT_CACHE_MB", keep.c_str(), 1);
    else unsetenv("HYBRIDLAB_WEIGHT_CACHE_MB");
    const Tensor c0 = small.device_chunk_columns(w, 4);
    CHECK(small.device_chunk_columns(w, 4).id() == c0.id());
  }
  REQUIRE_THROWS_WITH(ws.device_chunk_columns(w, 2), Catch::Contains("chunk columns of 4 rows"));
  REQUIRE_THROWS_WITH(ws.device_chunk_columns(w, 3), Catch::Contains("not whole groups of 3"));
}

// qmatvec_direct's rows per pass: the most up to `rows` that leave min_passes passes (Hopper's matmul: 2 and 4096).
TEST_CASE("vk ops: qmatvec_direct's rows per pass by the weight's rows", "[ops][quant]") {
  CHECK(gpu::qmatvec_pass_rows(2, 4096, 8192) == 2);
  CHECK(gpu::qmatvec_pass_rows(2, 4096, 8190) == 1);
  CHECK(gpu::qmatvec_pass_rows(2, 4096, 2048) == 1);
  CHECK(gpu::qmatvec_pass_rows(3, 4096, 12352) == 3);
  CHECK(gpu::qmatvec_pass_rows(4, 4096, 8193) == 2);
  CHECK(gpu::qmatvec_pass_rows(8, 0, 32) == 8);
  CHECK(gpu::qmatvec_pass_rows(0, 0, 32) == 1);
}
