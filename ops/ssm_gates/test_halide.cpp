// ssm_gates' Halide variants against the reference: every one on the op's cases, and a + dt_bias across softplus'
// log1p tail, its middle and past its threshold of 20.
#include "halide_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_HALIDE_VARIANT("ssm_gates")

TEST_CASE("halide ops: ssm_gates across softplus' range", "[halide][ops]") {
  std::mt19937_64 g(6);
  for (auto [T, nv] : {std::pair{1, 32}, {7, 32}, {3, 13}}) {
    gpu::OpArgs a{{{"b", Tensor::from(randn(g, T, nv, 4.0))}, {"a", Tensor::from(randn(g, T, nv, 15.0))}},
                  {{"A", weight("A", Mat<float>((-randn(g, 1, nv)).array().exp().matrix()))}, {"dt_bias", weight("dt_bias", randn(g, 1, nv))}},
                  {}};
    INFO("T " << T << ", " << nv << " heads");
    check_all("ssm_gates", a, 1e-6);
  }
}
