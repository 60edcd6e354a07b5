// matmul: every dense projection of the model (and lm_head): y = x W^T with W stored [out, in] (SPEC 3).
#pragma once
#include "common.h"

namespace hl::ref {

// x [T, in], w [out, in] -> [T, out].
template <class S> Mat<S> matmul(const Mat<S>& x, const Mat<S>& w);

}  // namespace hl::ref
