// add_rmsnorm: every variant against the reference on the op's cases (cases.cpp), and what is
// special about its kernels.
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_VARIANT("add_rmsnorm")

TEST_CASE("vk ops: add_rmsnorm, the residual add fused with the norm", "[vk][ops]") {
  std::mt19937_64 g(12);
  // Both outputs: the sum exactly (the same f32 additions), the norm like rmsnorm's.
  for (auto [r, c, G] : {std::tuple{1, 2048, 2048}, {7, 2048, 2048}, {4, 16 * 256, 256}, {3, 130, 13}}) {
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, r, c, 3.0))}, {"a", Tensor::from(randn(g, r, c))}},
                  {{"gain", weight("gain", randn(g, 1, G, 0.2, 1.0))}},
                  {{"eps", 1e-6}}};
    for (auto& v : vulkan_variants("add_rmsnorm")) require_close("add_rmsnorm", v, a, 1e-6);
    // A second addend (the MoE block's shared expert beside the routed experts): y = x + (a + b).
    a.set("b", Tensor::from(randn(g, r, c)));
    for (auto& v : vulkan_variants("add_rmsnorm")) {
      require_close("add_rmsnorm", v, a, 1e-6);
      gpu::WeightStore ws(&device());
      gpu::VariantCtx ctx{&device(), &ws};
      gpu::OpArgs got = a;
      gpu::Registry::get().variant("add_rmsnorm", v).run(ctx, got);
      const Mat<float> want = a.in("x").f32() + Mat<float>(a.in("a").f32() + a.in("b").f32());
      CHECK(got.t.at("y").f32() == want);  // the same f32 additions in the same order
    }
  }
}
