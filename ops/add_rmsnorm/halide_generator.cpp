// add_rmsnorm as a Halide pipeline: x, a (and b, two=true) [rows, G] (the wrapper views [T, n*G] as [T*n, G]) ->
// y = x + a, or x + (a + b) (the residual stream, added in the reference's order), and n = y / rms(y) * gain.
// two=false builds take b but never read it (the wrapper passes a). One output Func of two values (y, n), so both are
// written by one loop nest (one kernel on the GPU), on rmsnorm's schedule space (ops/halide/norm_schedule.h); the sum
// inlined, recomputed where the sum of squares and the outputs read it rather than stored and read back.
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
  Output<Func> yn{"yn", {Float(32), Float(32)}, 2};  // (y, n)

  void generate() {
    Var g("g"), r("r");
    Func sum("sum");
    sum(g, r) = two ? x(g, r) + (a(g, r) + b(g, r)) : x(g, r) + a(g, r);
    const Expr G = gain.dim(0).extent();
    RDom rg(0, G, "rg");
    Func ss("ss");
    ss(r) = 0.0f;
    ss(r) += sum(rg, r) * sum(rg, r);
    yn(g, r) = Tuple(sum(g, r), sum(g, r) * (1.0f / sqrt(ss(r) / cast<float>(G) + eps)) * gain(g));
    schedule_norm(yn, ss, g, r, rg, norm_schedule());
  }
};

}  // namespace hl::halide_gen

HALIDE_REGISTER_GENERATOR(hl::halide_gen::AddRmsNorm, hl_add_rmsnorm)
