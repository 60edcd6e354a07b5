// slice as a Halide pipeline: x [T, n*period] -> columns [offset, offset + width) of every block of period: y [T, n*width].
#include "ops/halide/generator_common.h"

namespace hl::halide_gen {

class Slice : public Generator<Slice> {
 public:
  GeneratorParam<int> vec{"vec", 8};                       // CPU: vector width along a row (1: scalar)
  GeneratorParam<int> rows_per_task{"rows_per_task", 16};  // CPU: rows per parallel task (0: serial)
  GeneratorParam<bool> gpu{"gpu", false};
  GeneratorParam<int> gpu_threads{"gpu_threads", 256};
  Input<Buffer<float, 2>> x{"x"};  // (n*period, T)
  Input<int> period{"period"};
  Input<int> offset{"offset"};
  Input<int> width{"width"};
  Output<Buffer<float, 2>> y{"y"};  // (n*width, T)

  void generate() {
    Var j("j"), t("t"), jt("jt"), o("o"), i("i"), to("to"), ti("ti");
    y(j, t) = x((j / width) * period + offset + j % width, t);
    if (gpu) {
      y.fuse(j, t, jt).gpu_tile(jt, o, i, gpu_threads, kGuard);
      return;
    }
    if (rows_per_task > 0) y.split(t, to, ti, rows_per_task, kGuard).parallel(to);
    if (vec > 1) y.vectorize(j, vec, kGuard);
  }
};

}  // namespace hl::halide_gen

HALIDE_REGISTER_GENERATOR(hl::halide_gen::Slice, hl_slice)
