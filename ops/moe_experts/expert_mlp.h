// The SwiGLU MLP that every routed expert and the shared expert compute: down(silu(gate x) * up x).
#pragma once
#include "common.h"

namespace hl::ref {

template <class S> struct ExpertMats {
  Mat<S> gate, up;  // [F, H]
  Mat<S> down;      // [H, F]
};

// x [T, H] -> [T, H].
template <class S> Mat<S> expert_mlp(const Mat<S>& x, const ExpertMats<S>& e);

}  // namespace hl::ref
