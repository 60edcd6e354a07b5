// ssm_gates: the oracle's conventions, every variant against the reference on the op's cases (cases.cpp), and what is
// special about its kernels.
#include "ops/gated_rmsnorm/reference.h"
#include "ops/l2norm/reference.h"
#include "ops/slice/reference.h"
#include "ops/ssm_gates/reference.h"
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

namespace {

// ssm_gates inputs: a + dt_bias spans about [-40, 40] (the log1p tail, the middle, past the threshold 20).
gpu::OpArgs gates_args(std::mt19937_64& g, int T, int nv) {
  return {{{"b", Tensor::from(randn(g, T, nv, 4.0))}, {"a", Tensor::from(randn(g, T, nv, 15.0))}},
          {{"A", weight("A", Mat<float>((-randn(g, 1, nv)).array().exp().matrix()))}, {"dt_bias", weight("dt_bias", randn(g, 1, nv))}},
          {}};
}

void require_all_close(const std::string& op, const gpu::OpArgs& a, double tol) {
  for (auto& v : vulkan_variants(op)) require_close(op, v, a, tol);
}

}  // namespace

HL_TEST_EVERY_VARIANT("ssm_gates")

TEST_CASE("ssm_gates, l2norm, gated_rmsnorm, slice: conventions", "[ops]") {
  Mat<double> b(1, 2), a(1, 2);
  b << 0, 0;
  a << 0, 30;  // softplus threshold: x > 20 returns x
  Vec<double> A(2), dt(2);
  A << -1, -2;
  dt << 0, 0;
  const auto gt = ref::ssm_gates(b, a, A, dt);
  CHECK(gt.beta(0, 0) == Approx(0.5));
  CHECK(gt.g(0, 0) == Approx(-std::log(2.0)));
  CHECK(gt.g(0, 1) == Approx(-60.0));

  Mat<double> x(1, 4);
  x << 3, 4, 0, 2;
  const Mat<double> l = ref::l2norm(x, 2, 0.5, 0.0);
  CHECK(l(0, 0) == Approx(0.3));
  CHECK(l(0, 1) == Approx(0.4));
  CHECK(l(0, 3) == Approx(0.5));

  // Gated norm: plain gain (no + 1), normalised per head, times silu(z).
  Mat<double> o(1, 4), z(1, 4);
  o << 3, 4, 1, 1;
  z << 0, 20, 1, -1;
  Vec<double> gain(2);
  gain << 2, 3;
  const Mat<double> y = ref::gated_rmsnorm(o, z, gain, 0.0);
  CHECK(y(0, 0) == 0);
  CHECK(y(0, 1) == Approx(4 / std::sqrt(12.5) * 3 * silu(20.0)));
  CHECK(y(0, 2) == Approx(2 * silu(1.0)));
  CHECK(y(0, 3) == Approx(3 * silu(-1.0)));

  Mat<double> s(1, 6);
  s << 0, 1, 2, 3, 4, 5;
  const Mat<double> sl = ref::slice(s, 3, 1, 2);  // blocks [0 1 2] [3 4 5] -> [1 2] [4 5]
  CHECK(sl.cols() == 4);
  CHECK((sl.array() == (Mat<double>(1, 4) << 1, 2, 4, 5).finished().array()).all());
}

TEST_CASE("vk ops: ssm_gates over softplus's whole range", "[vk][ops][deltanet]") {
  std::mt19937_64 g(13);
  for (auto [T, nv] : {std::pair{1, 32}, {40, 32}, {5, 3}}) require_all_close("ssm_gates", gates_args(g, T, nv), 1e-6);
}
