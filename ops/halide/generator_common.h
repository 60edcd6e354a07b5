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

// A loop split that is safe for any extent (also extents below the factor): outputs of every shape.
constexpr TailStrategy kGuard = TailStrategy::GuardWithIf;

}  // namespace hl::halide_gen
