// gated_rmsnorm as a Halide pipeline: o, z [rows, d_v] (one row per value head and token) ->
// y = o / rms(o) * gain * silu(z).
#include "ops/halide/norm_schedule.h"

namespace hl::halide_gen {

class GatedRmsNorm : public Generator<GatedRmsNorm> {
 public:
  HL_NORM_SCHEDULE_PARAMS
  Input<Buffer<float, 2>> o{"o"};  // (d_v, rows)
  Input<Buffer<float, 2>> z{"z"};
  Input<Buffer<float, 1>> gain{"gain"};
  Input<float> eps{"eps"};
  Output<Buffer<float, 2>> y{"y"};

  void generate() {
    Var g("g"), r("r");
    Func gate("gate");
    gate(g, r) = silu(z(g, r));
    norm_pipeline(y, o, gain, gain.dim(0).extent(), eps, norm_schedule(), gate);
  }
};

}  // namespace hl::halide_gen

HALIDE_REGISTER_GENERATOR(hl::halide_gen::GatedRmsNorm, hl_gated_rmsnorm)
