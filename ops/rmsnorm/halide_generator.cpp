// rmsnorm as a Halide pipeline: x [rows, G] (every normalised group of G values is one row; the wrapper
// views x [T, n*G] as [T*n, G]) -> y = x / rms(x) * gain. The zero-centred convention (gain = 1 + w) is
// already folded into the gain by the weight's transform.
#include "ops/halide/norm_schedule.h"

namespace hl::halide_gen {

class RmsNorm : public Generator<RmsNorm> {
 public:
  HL_NORM_SCHEDULE_PARAMS
  Input<Buffer<float, 2>> x{"x"};  // (G, rows)
  Input<Buffer<float, 1>> gain{"gain"};
  Input<float> eps{"eps"};
  Output<Buffer<float, 2>> y{"y"};

  void generate() { norm_pipeline(y, x, gain, gain.dim(0).extent(), eps, norm_schedule()); }
};

}  // namespace hl::halide_gen

HALIDE_REGISTER_GENERATOR(hl::halide_gen::RmsNorm, hl_rmsnorm)
