// slice: a strided column slice, the one layout op of the forward pass. It splits the GDN conv output
// into q | k | v (period = conv_dim) and the attention q_proj output into per-head query and gate halves
// (period = 2 * head_dim).
#pragma once
#include "common.h"

namespace hl::ref {

// x [T, n * period] -> [T, n * width]: from each block of `period` columns, columns [offset, offset + width).
template <class S> Mat<S> slice(const Mat<S>& x, int64_t period, int64_t offset, int64_t width);

}  // namespace hl::ref
