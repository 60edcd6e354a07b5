// rmsnorm: the oracle's conventions, every variant against the reference on the op's cases (cases.cpp), and what is
// special about its kernels.
#include "ops/rmsnorm/reference.h"
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_VARIANT("rmsnorm")

TEST_CASE("rmsnorm: zero-centred HF weight becomes gain 1 + w; groups normalise separately", "[ops][rmsnorm]") {
  Mat<float> hf_w(1, 2);
  hf_w << 0.0f, 1.0f;  // HF stores w; the math multiplies by 1 + w
  const Vec<double> gain = whole(host_source("w", hf_w), Transform::PlusOne).to_vec<double>();
  REQUIRE(gain(0) == 1.0);
  REQUIRE(gain(1) == 2.0);
  Mat<double> x(1, 4);
  x << 3, 4, -1, 1;  // groups [3, 4] (rms sqrt(12.5)) and [-1, 1] (rms 1)
  const Mat<double> y = ref::rmsnorm(x, gain, 0.0);
  CHECK(y(0, 0) == Approx(3 / std::sqrt(12.5)));
  CHECK(y(0, 1) == Approx(2 * 4 / std::sqrt(12.5)));
  CHECK(y(0, 2) == Approx(-1.0));
  CHECK(y(0, 3) == Approx(2.0));
}

TEST_CASE("vk ops: rmsnorm over rows and over head groups", "[vk][ops]") {
  std::mt19937_64 g(2);
  for (auto [r, c, G] : {std::tuple{1, 2048, 2048}, {7, 2048, 2048}, {5, 16 * 256, 256}, {3, 130, 13}}) {
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, r, c, 3.0))}}, {{"gain", weight("gain", randn(g, 1, G, 0.2, 1.0))}}, {{"eps", 1e-6}}};
    for (auto& v : vulkan_variants("rmsnorm")) require_close("rmsnorm", v, a, 1e-6);
    // Invocations per group: within a subgroup (lavapipe's 8: a butterfly), whole subgroups (partials through shared
    // memory), the whole workgroup; with several groups per workgroup and a last workgroup part empty.
    for (uint32_t group : {2u, 8u, 64u, 1024u}) {
      INFO("G " << G << ", group " << group);
      const vk::ScopedTuning t(device().ctx().profile(), {{"rmsnorm.rowgroup.group", group}});
      require_close("rmsnorm", "vulkan:rowgroup", a, 1e-6);
    }
  }
}
