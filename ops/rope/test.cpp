// rope: the oracle's conventions, every variant against the reference on the op's cases (cases.cpp), and what is
// special about its kernels.
#include "ops/rope/reference.h"
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_VARIANT("rope")

TEST_CASE("rope: NeoX pairs (i, i + R/2), only the first R dims rotate", "[ops][rope]") {
  const int D = 8, R = 4;
  const double theta = 100.0;
  const int64_t pos = 3;
  Mat<double> x = Mat<double>::Zero(1, 2 * D);
  x(0, 0) = 1;           // head 0, pair (0, 2), frequency 1
  x(0, D + 1) = 1;       // head 1, pair (1, 3), frequency theta^(-1/2) = 0.1
  x(0, D + 5) = 7;       // head 1, dim 5 >= R: passes through
  const Mat<double> y = ref::rope(x, D, R, theta, pos);
  CHECK(y(0, 0) == Approx(std::cos(3.0)));
  CHECK(y(0, 2) == Approx(std::sin(3.0)));
  CHECK(y(0, 1) == 0);
  CHECK(y(0, D + 1) == Approx(std::cos(0.3)));
  CHECK(y(0, D + 3) == Approx(std::sin(0.3)));
  CHECK(y(0, D + 5) == 7);
  CHECK(y.row(0).norm() == Approx(x.row(0).norm()));  // a rotation
}

TEST_CASE("vk ops: rope, small and large positions", "[vk][ops]") {
  std::mt19937_64 g(12);
  // Tolerance 1e-6 relative L2: the reference rounds cos/sin to f32 (3e-8 relative); the kernel's reduced
  // angle is a float in [-pi, pi] (rounding <= 1.2e-7 rad) and f32 sin/cos add ~1e-7. A plain f32 angle
  // p * inv_freq would be off by up to ~0.02 rad at p = 2e5.
  // (T, heads, D, R, pos0): real q and k (D 256, R 64), the tiny model (D 64, R 16), odd dims, R = D, R = 0.
  for (auto [T, heads, D, R, pos0] : {std::tuple{3, 16, 256, 64, 0}, {2, 2, 256, 64, 200000}, {1, 16, 256, 64, 262143},
                                      {17, 4, 64, 16, 5}, {5, 3, 10, 4, 7}, {2, 2, 8, 8, 100000}, {2, 2, 6, 0, 3}}) {
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, heads * D))}}, {},
                  {{"head_dim", D}, {"rot_dims", R}, {"theta", 1e7}, {"pos0", pos0}}};
    for (auto& v : vulkan_variants("rope")) require_close("rope", v, a, 1e-6);
  }
  // theta 1e4 turns the high frequencies faster: angles up to 2.6e5 rad at i = 0.
  gpu::OpArgs a{{{"x", Tensor::from(randn(g, 4, 2 * 128))}}, {},
                {{"head_dim", 128}, {"rot_dims", 128}, {"theta", 1e4}, {"pos0", 250000}}};
  for (auto& v : vulkan_variants("rope")) require_close("rope", v, a, 1e-6);
}
