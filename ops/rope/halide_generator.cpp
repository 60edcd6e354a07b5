// rope as a Halide pipeline: x [T, heads*D] -> NeoX rotation of dims [0, 2 half) of every head. The angles' cosines and
// sines [T, half] come in from the host, formed in double as the reference's (an f32 angle at position 4000 is off by
// ~2e-4 rad); the pipeline rotates.
#include "ops/halide/generator_common.h"

namespace hl::halide_gen {

class Rope : public Generator<Rope> {
 public:
  HL_ELEMENTWISE_SCHEDULE_PARAMS
  Input<Buffer<float, 3>> x{"x"};    // (D, heads, T)
  Input<Buffer<float, 2>> cs{"cs"};  // (half, T): cos
  Input<Buffer<float, 2>> sn{"sn"};  // (half, T): sin
  Output<Buffer<float, 3>> y{"y"};

  void generate() {
    Var d("d"), h("h"), t("t"), ht("ht");
    const Expr D = x.dim(0).extent(), half = cs.dim(0).extent();
    // Indices clamped into range so that bounds inference stays inside the buffers; select picks the live term.
    const Expr lo = clamp(d, 0, half - 1), hi = clamp(d - half, 0, half - 1);
    const Expr partner_up = x(clamp(d + half, 0, D - 1), h, t), partner_down = x(clamp(d - half, 0, D - 1), h, t);
    y(d, h, t) = select(d < half, x(d, h, t) * cs(lo, t) - partner_up * sn(lo, t),
                        d < 2 * half, x(d, h, t) * cs(hi, t) + partner_down * sn(hi, t), x(d, h, t));
    Func f = y;
    f.fuse(h, t, ht);
    schedule_elementwise(f, d, ht, elementwise_schedule());
  }
};

}  // namespace hl::halide_gen

HALIDE_REGISTER_GENERATOR(hl::halide_gen::Rope, hl_rope)
