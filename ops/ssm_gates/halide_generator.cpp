// ssm_gates as a Halide pipeline: b, a [T, n_v] -> beta = sigmoid(b), g = A * softplus(a + dt_bias) (per value head).
#include "ops/halide/generator_common.h"

namespace hl::halide_gen {

class SsmGates : public Generator<SsmGates> {
 public:
  HL_ELEMENTWISE_SCHEDULE_PARAMS
  Input<Buffer<float, 2>> b{"b"};  // (n_v, T)
  Input<Buffer<float, 2>> a{"a"};
  Input<Buffer<float, 1>> A{"A"};
  Input<Buffer<float, 1>> dt_bias{"dt_bias"};
  Output<Buffer<float, 2>> beta{"beta"};
  Output<Buffer<float, 2>> g{"g"};

  void generate() {
    Var h("h"), t("t");
    beta(h, t) = sigmoid(b(h, t));
    g(h, t) = A(h) * softplus(a(h, t) + dt_bias(h));
    schedule_elementwise(beta, h, t, elementwise_schedule());
    schedule_elementwise(g, h, t, elementwise_schedule());
  }
};

}  // namespace hl::halide_gen

HALIDE_REGISTER_GENERATOR(hl::halide_gen::SsmGates, hl_ssm_gates)
