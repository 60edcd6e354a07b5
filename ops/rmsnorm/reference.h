// rmsnorm: RMSNorm over groups of columns (SPEC 4.2). The zero-centred convention of HF (gain = 1 + w) is
// applied when the weight is materialised (Transform::PlusOne), so this op is y = x_hat * gain for both
// HF and GGUF weights. Used for input/post-attention/final norms (group = H) and q/k norms (group = D).
#pragma once
#include "common.h"

namespace hl::ref {

// x [rows, n * G], gain [G]: each group of G columns: y = x / sqrt(mean(x^2) + eps) * gain.
template <class S> Mat<S> rmsnorm(const Mat<S>& x, const Vec<S>& gain, double eps);

}  // namespace hl::ref
