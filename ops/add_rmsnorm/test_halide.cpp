// add_rmsnorm's Halide variants against the reference: every one on the op's cases (one addend and two), and odd
// widths and head groups.
#include "halide_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_HALIDE_VARIANT("add_rmsnorm")

TEST_CASE("halide ops: add_rmsnorm, one and two addends, odd widths and groups", "[halide][ops]") {
  std::mt19937_64 g(12);
  for (auto [r, c, G] : {std::tuple{1, 2048, 2048}, {3, 130, 13}, {2, 37, 37}, {5, 16 * 256, 256}})
    for (bool two : {false, true}) {
      gpu::OpArgs a{{{"x", Tensor::from(randn(g, r, c, 3.0))}, {"a", Tensor::from(randn(g, r, c))}},
                    {{"gain", weight("gain", randn(g, 1, G, 0.2, 1.0))}}, {{"eps", 1e-6}}};
      if (two) a.set("b", Tensor::from(randn(g, r, c)));
      INFO("x [" << r << ", " << c << "], G " << G << (two ? ", two addends" : ""));
      // The sum of squares of up to 2048 values of magnitude ~3 in another order than Eigen's: ~sqrt(G) ulps of the
      // mean square, 1.2e-6 measured at G = 2048.
      check_all("add_rmsnorm", a, 5e-6);
    }
}

#ifdef HYBRIDLAB_HALIDE_VULKAN
// y and n come out of one loop nest: one kernel per call on Vulkan, as the hand-written fused kernel's one dispatch.
TEST_CASE("halide-vulkan: add_rmsnorm writes the sum and the norm in one kernel", "[halide][vk]") {
  std::mt19937_64 g(13);
  gpu::OpArgs a{{{"x", Tensor::from(randn(g, 3, 512))}, {"a", Tensor::from(randn(g, 3, 512))}},
                {{"gain", weight("gain", randn(g, 1, 256, 0.2, 1.0))}}, {{"eps", 1e-6}}};
  for (auto& v : halide_variants("add_rmsnorm"))
    if (v.starts_with("halide-vulkan:")) {
      INFO(v);
      gpu::WeightStore ws(&device());
      gpu::VariantCtx c{&device(), &ws};
      gpu::OpArgs warm = a, x = a;
      gpu::Registry::get().variant("add_rmsnorm", v).run(c, warm);  // the weight on the device, the pipelines made
      device().sync();
      const auto before = gpu::halide::vulkan_counts();
      gpu::Registry::get().variant("add_rmsnorm", v).run(c, x);
      device().sync();
      const auto after = gpu::halide::vulkan_counts();
      CHECK(after.dispatched + after.runtime_kernels - before.dispatched - before.runtime_kernels == 1);
    }
}
#endif
