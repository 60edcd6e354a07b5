// ssm_conv: the oracle's conventions, every variant against the reference on the op's cases (cases.cpp), and what is
// special about its kernels.
#include "ops/ssm_conv/reference.h"
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

namespace {

void require_all_close(const std::string& op, const gpu::OpArgs& a, double tol) {
  for (auto& v : vulkan_variants(op)) require_close(op, v, a, tol);
}

}  // namespace

HL_TEST_EVERY_VARIANT("ssm_conv")

TEST_CASE("ssm_conv: tap 0 is the oldest input; the state carries across calls", "[ops][ssm_conv]") {
  Mat<double> w(1, 4);
  w << 0.001, 0.01, 0.1, 1.0;
  Mat<double> x(4, 1);
  x << 1, 2, 3, 4;
  Mat<double> st = Mat<double>::Zero(3, 1);
  const Mat<double> y = ref::ssm_conv(x, w, st);
  const double pre[4] = {1.0, 0.1 + 2, 0.01 + 0.2 + 3, 0.001 + 0.02 + 0.3 + 4};
  for (int t = 0; t < 4; ++t) CHECK(y(t, 0) == Approx(silu(pre[t])));
  CHECK(st(0, 0) == 2);  // the last three inputs, oldest first
  CHECK(st(2, 0) == 4);

  std::mt19937_64 g(1);
  const Mat<double> xs = test::randn<double>(g, 9, 5), ws = test::randn<double>(g, 5, 4);
  Mat<double> s1 = test::randn<double>(g, 3, 5), s2 = s1;
  const Mat<double> whole_run = ref::ssm_conv(xs, ws, s1);
  Mat<double> pieces(9, 5);
  pieces.topRows(2) = ref::ssm_conv(Mat<double>(xs.topRows(2)), ws, s2);
  pieces.middleRows(2, 1) = ref::ssm_conv(Mat<double>(xs.middleRows(2, 1)), ws, s2);
  pieces.bottomRows(6) = ref::ssm_conv(Mat<double>(xs.bottomRows(6)), ws, s2);
  CHECK(max_abs(pieces, whole_run) < 1e-14);
  CHECK(max_abs(s1, s2) == 0);
}

TEST_CASE("vk ops: ssm_conv with a carried state, odd and real widths", "[vk][ops][deltanet]") {
  std::mt19937_64 g(11);
  for (auto [C, K] : {std::pair{7, 4}, {256, 4}, {8192, 4}, {33, 3}})
    for (int T : {1, 2, 5, 40}) {
      INFO("C " << C << ", K " << K << ", T " << T);
      gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, C))}, {"state", Tensor::from(randn(g, K - 1, C))}},
                    {{"w", weight("w", randn(g, C, K, 0.5))}},
                    {}};
      require_all_close("ssm_conv", a, 1e-6);
    }
}
