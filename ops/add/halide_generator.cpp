// add as a Halide pipeline: y = a + b over the flattened values (the residual add).
#include "ops/halide/generator_common.h"

namespace hl::halide_gen {

class Add : public Generator<Add> {
 public:
  GeneratorParam<int> vec{"vec", 8};              // CPU: vector width (1: scalar)
  GeneratorParam<int> per_task{"per_task", 4096};  // CPU: values per parallel task (0: serial)
  GeneratorParam<bool> gpu{"gpu", false};
  GeneratorParam<int> gpu_threads{"gpu_threads", 256};
  Input<Buffer<float, 1>> a{"a"};
  Input<Buffer<float, 1>> b{"b"};
  Output<Buffer<float, 1>> y{"y"};

  void generate() {
    Var i("i"), io("io"), ii("ii");
    y(i) = a(i) + b(i);
    if (gpu) {
      y.gpu_tile(i, io, ii, gpu_threads, kGuard);
      return;
    }
    Var at = i;
    if (per_task > 0) {
      y.split(i, io, ii, per_task, kGuard).parallel(io);
      at = ii;
    }
    if (vec > 1) y.vectorize(at, vec, kGuard);
  }
};

}  // namespace hl::halide_gen

HALIDE_REGISTER_GENERATOR(hl::halide_gen::Add, hl_add)
