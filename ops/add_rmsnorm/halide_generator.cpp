// add_rmsnorm as a Halide pipeline: x, a (and b, two=true) [rows, G] (the wrapper views [T, n*G] as [T*n, G]) ->
// y = x + a, or x + (a + b) (the residual stream, added in the reference's order), and n = y / rms(y) * gain.
// two=false builds take b but never read it (the wrapper passes a). Schedules: y on the elementwise space, n on
// rmsnorm's (ops/halide/norm_schedule.h), reading y back (two kernels on the GPU).
#include "ops/halide/norm_schedule.h"

namespace hl::halide_gen {

class AddRmsNorm : public Generator<AddRmsNorm> {
 public:
  HL_NORM_SCHEDULE_PARAMS
  GeneratorParam<bool> two{"two", false};  // a second addend
  Input<Buffer<float, 2>> x{"x"};          // (G, rows)
  Input<Buffer<float, 2>> a{"a"};
  Input<Buffer<float, 2>> b{"b"};
  Input<Buffer<float, 1>> gain{"gain"};
  Input<float> eps{"eps"};
  Output<Buffer<float, 2>> y{"y"};
  Output<Buffer<float, 2>> n{"n"};

  void generate() {
    Var g("g"), r("r");
    y(g, r) = two ? x(g, r) + (a(g, r) + b(g, r)) : x(g, r) + a(g, r);
    schedule_elementwise(y, g, r, {vec, rows_per_task, gpu, gpu_threads});
    norm_pipeline(n, y, gain, gain.dim(0).extent(), eps, norm_schedule());
  }
};

}  // namespace hl::halide_gen

HALIDE_REGISTER_GENERATOR(hl::halide_gen::AddRmsNorm, hl_add_rmsnorm)
