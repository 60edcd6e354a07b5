// rope: partial rotary position embedding, NeoX (rotate_half) pairing (SPEC 4.5 step 4, 10.10).
// For text, Qwen3.6's interleaved MRoPE reduces to this 1-D form.
#pragma once
#include "common.h"

namespace hl::ref {

// x [T, n_heads * D]; in every head, dims [0, R) rotate in pairs (i, i + R/2), i < R/2, by angle
// (pos0 + t) * theta^(-2i/R); dims [R, D) pass through. Angles are formed in double (accurate at large
// positions), cos/sin rounded to S.
template <class S> Mat<S> rope(const Mat<S>& x, int head_dim, int rot_dims, double theta, int64_t pos0);

}  // namespace hl::ref
