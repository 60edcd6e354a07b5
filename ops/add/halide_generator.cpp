// add as a Halide pipeline: y = a + b (the residual add), [cols, rows].
#include "ops/halide/generator_common.h"

namespace hl::halide_gen {

class Add : public Generator<Add> {
 public:
  HL_ELEMENTWISE_SCHEDULE_PARAMS
  Input<Buffer<float, 2>> a{"a"};
  Input<Buffer<float, 2>> b{"b"};
  Output<Buffer<float, 2>> y{"y"};

  void generate() {
    Var x("x"), r("r");
    y(x, r) = a(x, r) + b(x, r);
    schedule_elementwise(y, x, r, elementwise_schedule());
  }
};

}  // namespace hl::halide_gen

HALIDE_REGISTER_GENERATOR(hl::halide_gen::Add, hl_add)
