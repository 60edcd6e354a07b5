// Shared by the Halide generators (ops/<op>/halide_generator.cpp): the math helpers and the conventions.
// Buffers wrap the host's row-major Eigen memory without copies: dimension 0 is the innermost (the column).
// Every generator takes its schedule from GeneratorParams (vector width, tiles, parallel split, compute_at
// choices, gpu); each op's halide.cmake names the schedules ("plain", "tuned", "gpu_plain", "gpu_tuned") as
// sets of those parameters, so trying another schedule is one line there.
#pragma once
#include "Halide.h"

namespace hl::halide_gen {

using namespace Halide;

inline Expr sigmoid(const Expr& x) { return 1.0f / (1.0f + exp(-x)); }
inline Expr silu(const Expr& x) { return x * sigmoid(x); }
// log(1 + e) for e in [0, 1] as 2 atanh(s), s = e / (2 + e): an odd series with no log() (whose accuracy the
// Vulkan spec leaves loose near 1), as ops/shaders/softplus.glsl.
inline Expr log1p01(const Expr& e) {
  const Expr s = e / (2.0f + e), s2 = s * s;
  Expr p = 1.0f / 17.0f;
  for (int n = 15; n >= 1; n -= 2) p = p * s2 + 1.0f / float(n);
  return 2.0f * s * p;
}
// torch's softplus (threshold 20), as max(x, 0) + log1p(exp(-|x|)).
inline Expr softplus(const Expr& x) { return select(x > 20.0f, x, max(x, 0.0f) + log1p01(exp(-abs(x)))); }

// A loop split that is safe for any extent (also extents below the factor): outputs of every shape.
constexpr TailStrategy kGuard = TailStrategy::GuardWithIf;

// The schedule space of the elementwise ops (add, slice, ssm_gates): f(x, r) over rows r. CPU: rows_per_task rows per
// parallel task (0: serial), vec-wide along x (1: scalar); GPU: one thread per value, gpu_threads per block.
struct ElementwiseSchedule {
  int vec, rows_per_task;
  bool gpu;
  int gpu_threads;
};
inline void schedule_elementwise(Func f, Var x, Var r, const ElementwiseSchedule& s) {
  Var xr("xr"), o("o"), i("i"), ro("ro"), ri("ri");
  if (s.gpu) {
    f.fuse(x, r, xr).gpu_tile(xr, o, i, s.gpu_threads, kGuard);
    return;
  }
  if (s.rows_per_task > 0) f.split(r, ro, ri, s.rows_per_task, kGuard).parallel(ro);
  if (s.vec > 1) f.vectorize(x, s.vec, kGuard);
}
#define HL_ELEMENTWISE_SCHEDULE_PARAMS                                  \
  GeneratorParam<int> vec{"vec", 8};                                    \
  GeneratorParam<int> rows_per_task{"rows_per_task", 16};               \
  GeneratorParam<bool> gpu{"gpu", false};                               \
  GeneratorParam<int> gpu_threads{"gpu_threads", 256};                  \
  ElementwiseSchedule elementwise_schedule() const { return {vec, rows_per_task, gpu, gpu_threads}; }

}  // namespace hl::halide_gen
