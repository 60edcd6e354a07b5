// slice as a Halide pipeline: x [T, n*period] -> columns [offset, offset + width) of every block of period: y [T, n*width].
#include "ops/halide/generator_common.h"

namespace hl::halide_gen {

class Slice : public Generator<Slice> {
 public:
  HL_ELEMENTWISE_SCHEDULE_PARAMS
  Input<Buffer<float, 2>> x{"x"};  // (n*period, T)
  Input<int> period{"period"};
  Input<int> offset{"offset"};
  Input<int> width{"width"};
  Output<Buffer<float, 2>> y{"y"};  // (n*width, T)

  void generate() {
    Var j("j"), t("t");
    y(j, t) = x((j / width) * period + offset + j % width, t);
    schedule_elementwise(y, j, t, elementwise_schedule());
  }
};

}  // namespace hl::halide_gen

HALIDE_REGISTER_GENERATOR(hl::halide_gen::Slice, hl_slice)
