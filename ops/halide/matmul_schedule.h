// The matmul schedule space, shared by the generators whose work is dot products (matmul, shared_expert): the
// reduction index innermost in both operands (a dot-product layout), so the CPU schedules vectorise the reduction
// itself: `vec` partial sums per output (rfactor), a register tile of tile_o x tile_t outputs, parallel over blocks of
// o_per_task output columns. GPU: gpu_plain is one thread per output; gpu_tuned splits the reduction over a block's
// threads (coalesced weight reads) with partial sums in shared memory.
#pragma once
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

}  // namespace hl::halide_gen
