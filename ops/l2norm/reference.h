// l2norm: per-head L2 normalisation of the GDN queries and keys, with the query scale 1/sqrt(d_k) folded
// in (SPEC 4.4 step 6; HF form x * rsqrt(sum(x^2) + eps)).
#pragma once
#include "common.h"

namespace hl::ref {

// x [T, n * d]: each group of d columns -> x * rsqrt(sum(x^2) + eps) * scale.
template <class S> Mat<S> l2norm(const Mat<S>& x, int d, S scale, double eps);

}  // namespace hl::ref
