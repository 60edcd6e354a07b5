// matmul_group's Vulkan variant against its reference (one reference matmul per weight): fresh random x and weights
// of every block type on every case, 2 to 4 weights, partial passes, T > 1; under other tunings (rows per pass, units
// per lane, x read from global memory); and the calls it must refuse.
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_VARIANT("matmul_group")

TEST_CASE("vk ops: matmul_group under other tunings", "[vk][ops][matmul_group]") {
  auto& prof = device().ctx().profile();
  const gpu::OpDef& op = gpu::Registry::get().op("matmul_group");
  // The last two with f32 products (x16 0: x as it is; the second reads it from global memory), held to f32 rounding.
  for (const auto& [rows, units, xg, x16] : {std::tuple{1u, 1u, 0u, 1u}, {3u, 2u, 0u, 0u}, {8u, 4u, 1u, 0u}}) {
    const vk::ScopedTuning scope(prof, {{"matmul_group.qmatvec_direct.rows", rows}, {"matmul_group.qmatvec_direct.units", units},
                                        {"matmul_group.qmatvec_direct.x_global", xg}, {"matmul_group.qmatvec_direct.wg", 64},
                                        {"matmul_group.qmatvec_direct.x16", x16}});
    for (const auto& c : op.cases(gpu::Scale::Test)) {
      INFO("rows " << rows << ", units " << units << ", x_global " << xg << ", x16 " << x16 << ", " << c.label);
      if (!x16) {
        std::mt19937_64 g(41);
        for (auto& [name, e] : compare_with_reference("matmul_group", "vulkan:qmatvec_direct", c.inputs(g))) CHECK(e.rel_l2 <= op.tolerance);
        continue;
      }
      std::mt19937_64 g(41);
      require_close("matmul_group", "vulkan:qmatvec_direct", c.inputs(g), op.tolerance);
    }
  }
}

TEST_CASE("vk ops: matmul_group refuses bad groups", "[vk][ops][matmul_group]") {
  std::mt19937_64 g(42);
  const auto& v = gpu::Registry::get().variant("matmul_group", "vulkan:qmatvec_direct");
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  gpu::OpArgs one{{{"x", Tensor::from(randn(g, 1, 64))}}, {{"w0", weight("w0", randn(g, 8, 64))}}, {}};
  CHECK_THROWS_WITH(v.run(ctx, one), Catch::Contains("2 <= n <= 4"));
  gpu::OpArgs gap = one;
  gap.w.emplace("w2", weight("w2", randn(g, 8, 64)));
  CHECK_THROWS_WITH(v.run(ctx, gap), Catch::Contains("in order"));
  gpu::OpArgs cols = one;
  cols.w.emplace("w1", weight("w1", randn(g, 8, 96)));
  CHECK_THROWS_WITH(v.run(ctx, cols), Catch::Contains("expects 96"));
  gpu::OpArgs odd{{{"x", Tensor::from(randn(g, 1, 48))}}, {{"w0", weight("w0", randn(g, 8, 48))}, {"w1", weight("w1", randn(g, 8, 48))}}, {}};
  CHECK_THROWS_WITH(v.run(ctx, odd), Catch::Contains("multiple of 32"));
}
