// matmul as Halide pipelines: y [T, out] = x [T, in] w [out, in]^T, with f32 weights (hl_matmul) or Q8_0
// weights decoded in the pipeline (hl_matmul_q8_0: blocks of 32 int8 and one f16 scale, ggml's layout,
// read as raw bytes: block b of row o is bytes [34 b, 34 b + 34) of that row; y = d * q).
// The schedule space (ops/halide/matmul_schedule.h): the reduction vectorised by rfactor and register tiles on the CPU,
// a thread per output or the reduction split over a block's threads on the GPU.
#include "ops/halide/matmul_schedule.h"

namespace hl::halide_gen {

class Matmul : public Generator<Matmul> {
 public:
  HL_MATMUL_SCHEDULE_PARAMS
  Input<Buffer<float, 2>> x{"x"};  // (in, T)
  Input<Buffer<float, 2>> w{"w"};  // (in, out)
  Output<Buffer<float, 2>> y{"y"};  // (out, T)

  void generate() {
    Var o("o"), t("t");
    const Expr K = x.dim(0).extent();
    // Clamped along tokens and outputs only: register tiles may over-compute at the edges.
    Func xb = BoundaryConditions::repeat_edge(x, {{Expr(), Expr()}, {x.dim(1).min(), x.dim(1).extent()}});
    Func wb = BoundaryConditions::repeat_edge(w, {{Expr(), Expr()}, {w.dim(1).min(), w.dim(1).extent()}});
    const MatmulSchedule s = matmul_schedule();
    Func acc("acc");
    auto rk = define_dot(acc, o, t, K, dot_lanes(s), [&](Expr k) { return xb(k, t) * wb(k, o); });
    y(o, t) = acc(o, t);
    schedule_matmul(y, acc, o, t, rk.rk, s, w.dim(1).extent());
  }
};

class MatmulQ8_0 : public Generator<MatmulQ8_0> {
 public:
  HL_MATMUL_SCHEDULE_PARAMS
  Input<Buffer<float, 2>> x{"x"};      // (in, T), in = 32 * blocks
  Input<Buffer<uint8_t, 3>> wq{"wq"};  // (34, blocks, out): { f16 d; int8 q[32]; } per block
  Output<Buffer<float, 2>> y{"y"};     // (out, T)

  void generate() {
    Var o("o"), t("t"), b("b"), j("j");
    Func xb = BoundaryConditions::repeat_edge(x, {{Expr(), Expr()}, {x.dim(1).min(), x.dim(1).extent()}});
    Func wb = BoundaryConditions::repeat_edge(wq, {{Expr(), Expr()}, {Expr(), Expr()}, {wq.dim(2).min(), wq.dim(2).extent()}});
    Func scale("scale"), quant("quant");
    scale(b, o) = cast<float>(reinterpret(Float(16), cast<uint16_t>(wb(0, b, o)) | (cast<uint16_t>(wb(1, b, o)) << 8)));
    quant(j, b, o) = cast<float>(reinterpret(Int(8), wb(2 + j, b, o)));
    const MatmulSchedule s = matmul_schedule();
    const int lanes = dot_lanes(s);
    if (32 % lanes) throw std::invalid_argument("hl_matmul_q8_0: vec must divide the block of 32");
    // r.x the lanes, r.y the lane groups of a block, r.z the block
    RDom r(0, lanes, 0, 32 / lanes, 0, wq.dim(1).extent(), "r");
    const Expr i = r.y * lanes + r.x;
    Func acc("acc");
    acc(o, t) = 0.0f;
    acc(o, t) += xb(r.z * 32 + i, t) * (scale(r.z, o) * quant(i, r.z, o));
    y(o, t) = acc(o, t);
    schedule_matmul(y, acc, o, t, {r.x, r.y, r.z}, s, wq.dim(2).extent());
  }
};

}  // namespace hl::halide_gen

HALIDE_REGISTER_GENERATOR(hl::halide_gen::Matmul, hl_matmul)
HALIDE_REGISTER_GENERATOR(hl::halide_gen::MatmulQ8_0, hl_matmul_q8_0)
