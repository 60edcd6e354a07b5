// l2norm as a Halide pipeline: x [rows, d] (every head of d values is one row; the wrapper views x [T, n*d] as
// [T*n, d]) -> y = x * scale / sqrt(sum x^2 + eps). The schedule space is rmsnorm's (norm_schedule.h).
#include "ops/halide/norm_schedule.h"

namespace hl::halide_gen {

class L2Norm : public Generator<L2Norm> {
 public:
  HL_NORM_SCHEDULE_PARAMS
  Input<Buffer<float, 2>> x{"x"};  // (d, rows)
  Input<float> scale{"scale"};
  Input<float> eps{"eps"};
  Output<Buffer<float, 2>> y{"y"};

  void generate() {
    Var g("g"), r("r");
    RDom rg(0, x.dim(0).extent(), "rg");
    Func ss("ss");
    ss(r) = 0.0f;
    ss(r) += x(rg, r) * x(rg, r);
    y(g, r) = x(g, r) * (scale / sqrt(ss(r) + eps));
    schedule_norm(y, ss, g, r, rg, norm_schedule());
  }
};

}  // namespace hl::halide_gen

HALIDE_REGISTER_GENERATOR(hl::halide_gen::L2Norm, hl_l2norm)
