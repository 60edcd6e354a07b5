// matmul as Halide pipelines: y [T, out] = x [T, in] w [out, in]^T, with f32 weights (hl_matmul) or Q8_0
// weights decoded in the pipeline (hl_matmul_q8_0: blocks of 32 int8 and one f16 scale, ggml's layout,
// read as raw bytes: block b of row o is bytes [34 b, 34 b + 34) of that row; y = d * q).
// Both operands keep the reduction index innermost (a dot-product layout), so the CPU schedules vectorise
// the reduction itself: `vec` partial sums per output (rfactor), a register tile of tile_o x tile_t outputs,
// parallel over blocks of o_per_task output columns. GPU: gpu_plain is one thread per output; gpu_tuned
// splits the reduction over a block's threads (coalesced weight reads) with partial sums in shared memory.
#include "ops/halide/generator_common.h"

namespace hl::halide_gen {

struct MatmulSchedule {
  int vec, tile_o, tile_t, o_per_task;
  bool gpu;
  int gpu_threads, gpu_rows, gpu_tile_t;
  bool gpu_split_k;
};

#define HL_MATMUL_SCHEDULE_PARAMS                                                                      \
  GeneratorParam<int> vec{"vec", 8};             /* CPU: lanes of the reduction (1: scalar) */         \
  GeneratorParam<int> tile_o{"tile_o", 4};       /* CPU: outputs of the register tile along out */     \
  GeneratorParam<int> tile_t{"tile_t", 2};       /* CPU: ... and along tokens */                       \
  GeneratorParam<int> o_per_task{"o_per_task", 64}; /* CPU: output columns per parallel task (0: serial) */ \
  GeneratorParam<bool> gpu{"gpu", false};                                                              \
  GeneratorParam<int> gpu_threads{"gpu_threads", 64}; /* GPU: threads per block */                     \
  GeneratorParam<int> gpu_rows{"gpu_rows", 4};       /* GPU (split_k): output columns per block */     \
  GeneratorParam<int> gpu_tile_t{"gpu_tile_t", 4};   /* GPU (split_k): tokens per block */             \
  GeneratorParam<bool> gpu_split_k{"gpu_split_k", true};                                               \
  MatmulSchedule matmul_schedule() const {                                                             \
    return {vec, tile_o, tile_t, o_per_task, gpu, gpu_threads, gpu_rows, gpu_tile_t, gpu_split_k};     \
  }

// y(o, t) = acc(o, t); acc's update reduces over rk (whose first RVar is split into lanes).
// `outer`: a further reduction loop outside rk (Q8_0: the block index).
inline void schedule_matmul(Func y, Func acc, Var o, Var t, RVar rk, const MatmulSchedule& s, std::vector<RVar> outer = {}) {
  Var oo("oo"), oi("oi"), to("to"), ti("ti"), u("u"), po("po"), pi("pi"), pto("pto"), pti("pti");
  RVar rko("rko"), rki("rki");
  if (!s.gpu) {
    y.split(o, oo, oi, std::max(1, s.o_per_task), kGuard).split(t, to, ti, std::max(1, s.tile_t), kGuard)
        .reorder(oi, ti, to, oo);
    if (s.o_per_task > 0) y.parallel(oo);
    acc.compute_at(y, to);
    if (s.vec > 1) {
      Func part = acc.update().split(rk, rko, rki, s.vec, kGuard).rfactor(rki, u);
      part.compute_at(y, to).reorder_storage(u, o, t).vectorize(u);  // lanes innermost (rfactor appends u)
      // Register tile: tile_o x tile_t accumulators of `vec` lanes, over-computed at the edges (inputs are
      // clamped, the extra outputs are never stored).
      std::vector<VarOrRVar> order{u, pi, pti, rko};
      for (auto& r : outer) order.push_back(r);
      order.push_back(po);
      order.push_back(pto);
      part.update()
          .split(o, po, pi, std::max(1, s.tile_o), TailStrategy::RoundUp)
          .split(t, pto, pti, std::max(1, s.tile_t), TailStrategy::RoundUp)
          .reorder(order)
          .vectorize(u)
          .unroll(pi)
          .unroll(pti);
    }
    return;
  }
  if (!s.gpu_split_k) {
    y.gpu_tile(o, t, oo, to, oi, ti, s.gpu_threads, 1, kGuard);
    acc.compute_at(y, oi);
    return;
  }
  y.gpu_tile(o, t, oo, to, oi, ti, s.gpu_rows, s.gpu_tile_t, kGuard);
  acc.compute_at(y, oo).gpu_threads(o, t);
  Func part = acc.update().split(rk, rko, rki, s.gpu_threads, kGuard).rfactor(rki, u);
  acc.update().gpu_threads(o, t);
  part.compute_at(y, oo).gpu_threads(u);
  std::vector<VarOrRVar> order{o, t, rko};
  for (auto& r : outer) order.push_back(r);
  order.push_back(u);
  part.update().reorder(order).gpu_threads(u);
}

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
    RDom rk(0, K, "rk");
    Func acc("acc");
    acc(o, t) = 0.0f;
    acc(o, t) += xb(rk, t) * wb(rk, o);
    y(o, t) = acc(o, t);
    schedule_matmul(y, acc, o, t, rk.x, matmul_schedule());
  }
};

class MatmulQ8_0 : public Generator<MatmulQ8_0> {
 public:
  HL_MATMUL_SCHEDULE_PARAMS
  Input<Buffer<float, 2>> x{"x"};      // (in, T), in = 32 * blocks
  Input<Buffer<uint8_t, 3>> wq{"wq"};  // (34, blocks, out): { f16 d; int8 q[32]; } per block
  Output<Buffer<float, 2>> y{"y"};     // (out, T)

  void generate() {
    Var o("o"), t("t"), b("b"), i("i");
    Func xb = BoundaryConditions::repeat_edge(x, {{Expr(), Expr()}, {x.dim(1).min(), x.dim(1).extent()}});
    Func wb = BoundaryConditions::repeat_edge(wq, {{Expr(), Expr()}, {Expr(), Expr()}, {wq.dim(2).min(), wq.dim(2).extent()}});
    Func scale("scale"), quant("quant");
    scale(b, o) = cast<float>(reinterpret(Float(16), cast<uint16_t>(wb(0, b, o)) | (cast<uint16_t>(wb(1, b, o)) << 8)));
    quant(i, b, o) = cast<float>(reinterpret(Int(8), wb(2 + i, b, o)));
    RDom r(0, 32, 0, wq.dim(1).extent(), "r");  // r.x within the block, r.y the block
    Func acc("acc");
    acc(o, t) = 0.0f;
    acc(o, t) += xb(r.y * 32 + r.x, t) * (scale(r.y, o) * quant(r.x, r.y, o));
    y(o, t) = acc(o, t);
    schedule_matmul(y, acc, o, t, r.x, matmul_schedule(), {r.y});
  }
};

}  // namespace hl::halide_gen

HALIDE_REGISTER_GENERATOR(hl::halide_gen::Matmul, hl_matmul)
HALIDE_REGISTER_GENERATOR(hl::halide_gen::MatmulQ8_0, hl_matmul_q8_0)
