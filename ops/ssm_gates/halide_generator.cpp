// ssm_gates as a Halide pipeline: b, a [T, n_v] -> beta = sigmoid(b), g = A * softplus(a + dt_bias) (per value head).
#include "ops/halide/generator_common.h"

namespace hl::halide_gen {

class SsmGates : public Generator<SsmGates> {
 public:
  GeneratorParam<int> vec{"vec", 8};              // CPU: vector width over the heads (1: scalar)
  GeneratorParam<int> rows_per_task{"rows_per_task", 16};  // CPU: tokens per parallel task (0: serial)
  GeneratorParam<bool> gpu{"gpu", false};
  GeneratorParam<int> gpu_threads{"gpu_threads", 256};
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
    for (Func f : {Func(beta), Func(g)}) {
      Var ht("ht"), o("o"), i("i"), to("to"), ti("ti");
      if (gpu) {
        f.fuse(h, t, ht).gpu_tile(ht, o, i, gpu_threads, kGuard);
        continue;
      }
      if (rows_per_task > 0) f.split(t, to, ti, rows_per_task, kGuard).parallel(to);
      if (vec > 1) f.vectorize(h, vec, kGuard);
    }
  }
};

}  // namespace hl::halide_gen

HALIDE_REGISTER_GENERATOR(hl::halide_gen::SsmGates, hl_ssm_gates)
