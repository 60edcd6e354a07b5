// shared_expert as a Halide pipeline: y = sigmoid(x . gate_w) * down(silu(x gate^T) * (x up^T)) for x [T, H], gate and
// up [F, H], down [H, F] (f32 weights), the three products on the matmul schedule space (matmul_schedule.h): the
// gate and up products as stages computed once, SwiGLU inline in the down product's reduction, the sigmoid gate per
// token.
#include "ops/halide/matmul_schedule.h"

namespace hl::halide_gen {

class SharedExpert : public Generator<SharedExpert> {
 public:
  HL_MATMUL_SCHEDULE_PARAMS
  Input<Buffer<float, 2>> x{"x"};        // (H, T)
  Input<Buffer<float, 2>> gate{"gate"};  // (H, F)
  Input<Buffer<float, 2>> up{"up"};      // (H, F)
  Input<Buffer<float, 2>> down{"down"};  // (F, H)
  Input<Buffer<float, 1>> gate_w{"gate_w"};  // (H)
  Output<Buffer<float, 2>> y{"y"};       // (H, T)

  void generate() {
    Var f("f"), o("o"), t("t");
    const Expr H = x.dim(0).extent(), F = gate.dim(1).extent();
    // Clamped along tokens and rows only: register tiles may over-compute at the edges.
    Func xb = BoundaryConditions::repeat_edge(x, {{Expr(), Expr()}, {x.dim(1).min(), x.dim(1).extent()}});
    Func gb = BoundaryConditions::repeat_edge(gate, {{Expr(), Expr()}, {gate.dim(1).min(), gate.dim(1).extent()}});
    Func ub = BoundaryConditions::repeat_edge(up, {{Expr(), Expr()}, {up.dim(1).min(), up.dim(1).extent()}});
    Func db = BoundaryConditions::repeat_edge(down, {{Expr(), Expr()}, {down.dim(1).min(), down.dim(1).extent()}});
    const MatmulSchedule s = matmul_schedule();
    const int lanes = dot_lanes(s);
    Func accg("accg"), accu("accu"), accd("accd"), g("g"), u("u"), d("d"), sg("sg");
    auto rg = define_dot(accg, f, t, H, lanes, [&](Expr k) { return xb(k, t) * gb(k, f); });
    g(f, t) = accg(f, t);
    auto ru = define_dot(accu, f, t, H, lanes, [&](Expr k) { return xb(k, t) * ub(k, f); });
    u(f, t) = accu(f, t);
    auto rd = define_dot(accd, o, t, F, lanes, [&](Expr k) { return silu(g(k, t)) * u(k, t) * db(k, o); });
    d(o, t) = accd(o, t);
    RDom rh(0, H, "rh");
    sg(t) = sigmoid(sum(x(rh, t) * gate_w(rh)));
    y(o, t) = sg(t) * d(o, t);

    for (auto [out, acc, v, r, n] : {std::tuple{g, accg, f, rg, F}, {u, accu, f, ru, F}, {d, accd, o, rd, H}}) {
      out.compute_root();
      schedule_matmul(out, acc, v, t, r.rk, s, n);
    }
    sg.compute_root();
    Var oo("oo"), to("to"), oi("oi"), ti("ti");
    if (s.gpu) {
      sg.gpu_tile(t, to, ti, s.gpu_threads, kGuard);
      y.gpu_tile(o, t, oo, to, oi, ti, s.gpu_threads, 1, kGuard);
    } else if (s.vec > 1) {
      y.vectorize(o, s.vec, kGuard);
    }
  }
};

}  // namespace hl::halide_gen

HALIDE_REGISTER_GENERATOR(hl::halide_gen::SharedExpert, hl_shared_expert)
