// The matmul schedule space, shared by the generators whose work is dot products (matmul, shared_expert): the
// reduction index innermost in both operands (a dot-product layout), so the CPU schedules vectorise the reduction
// itself: `vec` partial sums per output (rfactor), a register tile of tile_o x tile_t outputs, parallel over blocks of
// o_per_task output columns. GPU: gpu_plain is one thread per output; gpu_tuned splits the reduction over a block's
// threads (coalesced weight reads) with partial sums in shared memory.
#pragma once
#include <functional>

#include "ops/halide/generator_common.h"

namespace hl::halide_gen {

struct MatmulSchedule {
  int vec, tile_o, tile_t, o_per_task, min_tasks;
  bool gpu;
  int gpu_threads, gpu_rows, gpu_tile_t;
  bool gpu_split_k;
};

#define HL_MATMUL_SCHEDULE_PARAMS                                                                      \
  GeneratorParam<int> vec{"vec", 8};             /* CPU: lanes of the reduction (1: scalar) */         \
  GeneratorParam<int> tile_o{"tile_o", 4};       /* CPU: outputs of the register tile along out */     \
  GeneratorParam<int> tile_t{"tile_t", 2};       /* CPU: ... and along tokens */                       \
  GeneratorParam<int> o_per_task{"o_per_task", 64}; /* CPU: output columns per parallel task (0: serial) */ \
  GeneratorParam<int> min_tasks{"min_tasks", 1}; /* CPU: ... fewer where that leaves fewer tasks than this */ \
  GeneratorParam<bool> gpu{"gpu", false};                                                              \
  GeneratorParam<int> gpu_threads{"gpu_threads", 64}; /* GPU: threads per block */                     \
  GeneratorParam<int> gpu_rows{"gpu_rows", 4};       /* GPU (split_k): output columns per block */     \
  GeneratorParam<int> gpu_tile_t{"gpu_tile_t", 4};   /* GPU (split_k): tokens per block */             \
  GeneratorParam<bool> gpu_split_k{"gpu_split_k", true};                                               \
  MatmulSchedule matmul_schedule() const {                                                             \
    return {vec, tile_o, tile_t, o_per_task, min_tasks, gpu, gpu_threads, gpu_rows, gpu_tile_t, gpu_split_k};     \
  }

// acc(o, t) = the sum over k < K of term(k). With `lanes` > 1, k = lanes * b + l over the whole blocks (the loop the CPU
// schedule vectorises, with no test of k's bound in it), then the K % lanes left over in a second update (with
// tail_update false, left to the caller: sum(term(tail))). The GPU schedules take lanes = 1. Returns rk, the lanes'
// RVar and the blocks' (innermost first, for schedule_matmul), and the tail's.
struct Dot {
  std::vector<RVar> rk;
  RVar tail;
};
inline Dot define_dot(Func acc, Var o, Var t, Expr K, int lanes, const std::function<Expr(Expr)>& term,
                      bool tail_update = true) {
  lanes = std::max(1, lanes);
  RDom main(0, lanes, 0, K / lanes, "rk"), tail((K / lanes) * lanes, K % lanes, "rt");
  acc(o, t) = 0.0f;
  acc(o, t) += term(main.y * lanes + main.x);
  if (tail_update) acc(o, t) += term(tail.x);
  return {{main.x, main.y}, tail.x};
}

inline int dot_lanes(const MatmulSchedule& s) { return s.gpu ? 1 : std::max(1, s.vec); }

// y(o, t) = acc(o, t) for o < O; acc's first update reduces over rk: rk[0] the lanes (extent dot_lanes(s)), then the
// outer reduction loops innermost first; a further update (define_dot's tail), if any, reduces what the lanes left.
// CPU: each tile_o x tile_t block of outputs accumulates in registers: `vec` partial sums per output (rfactor), summed
// across the vector once at the end.
inline void schedule_matmul(Func y, Func acc, Var o, Var t, std::vector<RVar> rk, const MatmulSchedule& s, Expr O) {
  Var oo("oo"), oi("oi"), to("to"), ti("ti"), u("u"), po("po"), pi("pi");
  RVar rko("rko"), rki("rki");
  const int updates = int(acc.num_update_definitions());
  if (!s.gpu) {
    const int TO = std::max(1, s.tile_o), TT = std::max(1, s.tile_t);
    // a task's columns: o_per_task, or fewer (whole tiles) where O would leave fewer than min_tasks tasks
    const int most = std::max(TO, s.o_per_task);
    const Expr per_task = clamp((O + s.min_tasks * TO - 1) / (s.min_tasks * TO) * TO, TO, most);
    y.split(o, oo, oi, s.min_tasks > 1 ? per_task : Expr(std::max(1, s.o_per_task)), kGuard)
        .split(oi, po, pi, TO, kGuard).split(t, to, ti, TT, kGuard)
        .reorder(pi, ti, po, to, oo);
    if (s.o_per_task > 0) y.parallel(oo);
    if (s.vec <= 1) {
      acc.compute_at(y, to);
      return;
    }
    y.unroll(pi).unroll(ti);
    acc.compute_at(y, po).bound_extent(o, TO).bound_extent(t, TT).store_in(MemoryType::Register).unroll(o).unroll(t);
    for (int i = 1; i < updates; ++i) acc.update(i).unroll(o).unroll(t);
    acc.update(0).atomic().vectorize(rk[0]).unroll(o).unroll(t);  // the lanes summed once, across the vector
    Func part = acc.update(0).rfactor(rk[0], u);
    part.compute_at(y, po).bound_extent(o, TO).bound_extent(t, TT).reorder_storage(u, o, t)
        .store_in(MemoryType::Register).vectorize(u).unroll(o).unroll(t);
    std::vector<VarOrRVar> order{u, o, t};
    for (size_t i = 1; i < rk.size(); ++i) order.push_back(rk[i]);
    part.update().reorder(order).vectorize(u).unroll(o).unroll(t);
    return;
  }
  if (!s.gpu_split_k) {
    y.gpu_tile(o, t, oo, to, oi, ti, s.gpu_threads, 1, kGuard);
    acc.compute_at(y, oi);
    return;
  }
  y.gpu_tile(o, t, oo, to, oi, ti, s.gpu_rows, s.gpu_tile_t, kGuard);
  acc.compute_at(y, oo).gpu_threads(o, t);
  for (int i = 1; i < updates; ++i) acc.update(i).gpu_threads(o, t);
  Func part = acc.update(0).split(rk[1], rko, rki, s.gpu_threads, kGuard).rfactor(rki, u);
  acc.update(0).gpu_threads(o, t);
  part.compute_at(y, oo).gpu_threads(u);
  std::vector<VarOrRVar> order{o, t, rk[0], rko};
  for (size_t i = 2; i < rk.size(); ++i) order.push_back(rk[i]);
  order.push_back(u);
  part.update().reorder(order).gpu_threads(u);
}

}  // namespace hl::halide_gen
