// ssm_gates: the Gated DeltaNet's per-token, per-value-head gates (SPEC 4.4 step 5):
// beta = sigmoid(b) (write strength), g = A * softplus(a + dt_bias) <= 0 (log decay), A = -exp(A_log).
#pragma once
#include "common.h"

namespace hl::ref {

template <class S> struct Gates {
  Mat<S> beta, g;  // [T, n_v] each
};

// b, a [T, n_v]; A, dt_bias [n_v].
template <class S> Gates<S> ssm_gates(const Mat<S>& b, const Mat<S>& a, const Vec<S>& A, const Vec<S>& dt_bias);

}  // namespace hl::ref
