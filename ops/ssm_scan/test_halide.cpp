// ssm_scan's Halide variants against the reference: every one on the op's cases, and the shapes and inputs that test
// what is special about its schedules.
#include "halide_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_HALIDE_VARIANT("ssm_scan")

// The Vulkan schedules (chunks of 64) see T = 1, a padded last chunk, three chunks, both head orders, odd
// head sizes and the real 128 x 128 state at short T (their state pass is serial per value column: the
// long real-shape case runs on the CPU schedules only).
TEST_CASE("halide ops: ssm_scan, chunked form, padded last chunk, both head orders, real head shape", "[halide][ops]") {
  std::mt19937_64 g(7);
  // (T, n_k, n_v, d_k, d_v, tiled)
  for (auto [T, nk, nv, dk, dv, tiled] : {std::tuple{1, 2, 4, 16, 16, 0}, {70, 2, 4, 16, 24, 0}, {33, 2, 4, 8, 8, 1},
                                          {5, 1, 3, 7, 9, 1}, {130, 2, 4, 16, 16, 1}, {1, 2, 4, 128, 128, 1},
                                          {20, 2, 4, 128, 128, 0}, {130, 1, 2, 128, 128, 0}}) {
    std::uniform_real_distribution<float> beta(0.05f, 0.95f), decay(-2.0f, -0.001f);
    Mat<float> b(T, nv), gl(T, nv);
    for (int64_t i = 0; i < b.size(); ++i) b.data()[i] = beta(g), gl.data()[i] = decay(g);
    gpu::OpArgs a{{{"q", Tensor::from(unit_heads(randn(g, T, nk * dk), dk, 1 / std::sqrt(float(dk))))},
                   {"k", Tensor::from(unit_heads(randn(g, T, nk * dk), dk, 1.0f))},
                   {"v", Tensor::from(randn(g, T, nv * dv))},
                   {"beta", Tensor::from(b)},
                   {"g", Tensor::from(gl)},
                   {"state", Tensor::from(randn(g, nv, dk * dv, 0.1))}},
                  {},
                  {{"n_k_heads", double(nk)}, {"decode", T == 1 ? 1.0 : 0.0}, {"chunk", 64}, {"tiled", double(tiled)}}};
    INFO("T " << T << " heads " << nk << "/" << nv << " d " << dk << "x" << dv << " tiled " << tiled);
    // f32 sums over d_k and the chunk in another order than the oracle's: the Vulkan schedules measured <= 3e-7.
    check_all("ssm_scan", a, 1e-5, dk < 128 || T < 64);
  }
}

TEST_CASE("halide ops: ssm_scan's Vulkan schedules refuse a state pass past lavapipe's loop limit", "[halide][ops]") {
  if (device().info().driver_id != VK_DRIVER_ID_MESA_LLVMPIPE) return;  // the limit is lavapipe's
  std::mt19937_64 g(17);
  const int T = 300, d = 128;  // 5 chunks x 129 x 128 iterations in one thread; refused before any work
  gpu::OpArgs a{{{"q", Tensor::from(randn(g, T, d))}, {"k", Tensor::from(randn(g, T, d))}, {"v", Tensor::from(randn(g, T, d))},
                 {"beta", Tensor::from(randn(g, T, 1))}, {"g", Tensor::from(randn(g, T, 1))},
                 {"state", Tensor::from(randn(g, 1, d * d))}},
                {},
                {{"n_k_heads", 1.0}}};
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  for (const char* v : {"halide-vulkan:ssm_scan:gpu_plain", "halide-vulkan:ssm_scan:gpu_tuned"})
    REQUIRE_THROWS_WITH(gpu::Registry::get().variant("ssm_scan", v).run(ctx, a), Catch::Contains("lavapipe's limit"));
}
