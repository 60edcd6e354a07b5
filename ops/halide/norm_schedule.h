// The schedule space shared by the rmsnorm and gated_rmsnorm generators: y(g, r) over rows r of G values,
// with a sum of squares ss(r) per row.
#pragma once
#include "ops/halide/generator_common.h"

namespace hl::halide_gen {

struct NormSchedule {
  int vec;            // CPU: vector width over the row (1: scalar)
  int rows_per_task;  // CPU: rows per parallel task (0: serial)
  bool rfactor_sum;   // CPU: the sum of squares in `vec` lanes (rfactor), then one horizontal add
  bool gpu;           // a GPU schedule (the target has a GPU feature)
  int gpu_threads;    // GPU: threads per block
  bool gpu_shared;    // GPU: one block per row, threads reduce through shared memory (else: one thread per row)
  int gpu_fanin;      // GPU, shared: > 1: threads / fanin threads first add the partial sums fanin at a time, so each
                      // thread then adds threads / fanin of them, not all (0: each thread adds every partial sum)
  int gpu_rows;       // GPU, shared: rows per block (gpu_threads threads each), for rows too short to fill a block
};

inline void schedule_norm(Func y, Func ss, Var g, Var r, RDom rg, const NormSchedule& s) {
  Var ro("ro"), ri("ri"), go("go"), gi("gi"), u("u");
  RVar rgo("rgo"), rgi("rgi");
  if (!s.gpu) {
    Var at = r;
    if (s.rows_per_task > 0) {
      y.split(r, ro, ri, s.rows_per_task, kGuard).parallel(ro);
      at = ri;
    }
    if (s.vec > 1) y.vectorize(g, s.vec, kGuard);
    ss.compute_at(y, at);
    if (s.rfactor_sum && s.vec > 1) {
      Func part = ss.update().split(rg.x, rgo, rgi, s.vec, kGuard).rfactor(rgi, u);
      part.compute_at(y, at).reorder_storage(u, r).vectorize(u);  // lanes innermost (rfactor appends u)
      part.update().vectorize(u);
    }
    return;
  }
  if (s.gpu_shared) {
    // A block of gpu_rows rows, gpu_threads threads per row (gpu_rows > 1: a 2-D block, rows the second thread dim).
    const bool rows = s.gpu_rows > 1;
    Var at = rows ? ro : r;
    y.split(g, go, gi, s.gpu_threads, kGuard);
    if (rows) {
      y.split(r, ro, ri, s.gpu_rows, kGuard).reorder(go, gi, ri, ro).gpu_blocks(ro).gpu_threads(gi, ri);
    } else {
      y.reorder(go, gi, r).gpu_blocks(r).gpu_threads(gi);
    }
    Func part = ss.update().split(rg.x, rgo, rgi, s.gpu_threads, kGuard).rfactor(rgi, u);
    part.compute_at(y, at);
    if (rows) {
      part.reorder(u, r).reorder_storage(u, r).gpu_threads(u, r);  // u innermost (thread x), in shared memory too
      part.update().reorder(rgo, u, r).gpu_threads(u, r);
    } else {
      part.gpu_threads(u);
      part.update().reorder(rgo, u).gpu_threads(u);
    }
    if (s.gpu_fanin > 1) {
      RVar fo("fo"), fi("fi");
      Var v("v");
      Func part2 = ss.update().split(rgi, fo, fi, s.gpu_fanin, kGuard).rfactor(fo, v);
      part2.compute_at(y, at);
      if (rows) {
        part2.reorder(v, r).reorder_storage(v, r).gpu_threads(v, r);
        part2.update().reorder(fi, v, r).gpu_threads(v, r);
      } else {
        part2.gpu_threads(v);
        part2.update().reorder(fi, v).gpu_threads(v);
      }
    }
    ss.compute_at(y, gi);  // each thread adds its row's partial sums (shared memory reads)
  } else {
    y.split(r, ro, ri, s.gpu_threads, kGuard).reorder(g, ri, ro).gpu_blocks(ro).gpu_threads(ri);
    ss.compute_at(y, ri);
  }
}

// y(g, r) = x(g, r) / rms(x(., r)) * gain(g) [* gate(g, r)], rows of G = gain's length, scheduled by s.
inline void norm_pipeline(Func y, Func x, const Func& gain, const Expr& G, const Expr& eps, const NormSchedule& s,
                          const Func& gate = Func()) {
  Var g("g"), r("r");
  RDom rg(0, G, "rg");
  Func ss("ss");
  ss(r) = 0.0f;
  ss(r) += x(rg, r) * x(rg, r);
  Expr v = x(g, r) * (1.0f / sqrt(ss(r) / cast<float>(G) + eps)) * gain(g);
  y(g, r) = gate.defined() ? v * gate(g, r) : v;
  schedule_norm(y, ss, g, r, rg, s);
}

// The GeneratorParams of that space, declared once for both generators.
#define HL_NORM_SCHEDULE_PARAMS                                                    \
  GeneratorParam<int> vec{"vec", 8};                                               \
  GeneratorParam<int> rows_per_task{"rows_per_task", 8};                           \
  GeneratorParam<bool> rfactor_sum{"rfactor_sum", true};                           \
  GeneratorParam<bool> gpu{"gpu", false};                                          \
  GeneratorParam<int> gpu_threads{"gpu_threads", 128};                             \
  GeneratorParam<bool> gpu_shared{"gpu_shared", true};                             \
  GeneratorParam<int> gpu_fanin{"gpu_fanin", 0};                                   \
  GeneratorParam<int> gpu_rows{"gpu_rows", 1};                                     \
  NormSchedule norm_schedule() const {                                             \
    return {vec, rows_per_task, rfactor_sum, gpu, gpu_threads, gpu_shared, gpu_fanin, gpu_rows}; \
  }

}  // namespace hl::halide_gen
