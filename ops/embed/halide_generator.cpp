// embed as a Halide pipeline: y[t] = table[tokens[t]] (the ids checked by the wrapper first), [H, T].
#include "ops/halide/generator_common.h"

namespace hl::halide_gen {

class Embed : public Generator<Embed> {
 public:
  HL_ELEMENTWISE_SCHEDULE_PARAMS
  Input<Buffer<int32_t, 1>> tokens{"tokens"};  // (T)
  Input<Buffer<float, 2>> table{"table"};      // (H, V)
  Output<Buffer<float, 2>> y{"y"};             // (H, T)

  void generate() {
    Var h("h"), t("t");
    y(h, t) = table(h, clamp(tokens(t), 0, table.dim(1).extent() - 1));
    schedule_elementwise(y, h, t, elementwise_schedule());
  }
};

}  // namespace hl::halide_gen

HALIDE_REGISTER_GENERATOR(hl::halide_gen::Embed, hl_embed)
