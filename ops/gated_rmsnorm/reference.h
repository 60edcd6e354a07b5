// gated_rmsnorm: the GDN output norm (SPEC 4.2 convention 2): RMSNorm per value head with a PLAIN gain
// (not zero-centred) shared by all heads, then multiplied by silu(z) ("norm before gate").
#pragma once
#include "common.h"

namespace hl::ref {

// o, z [T, n_v * d_v], gain [d_v]: each head: o / sqrt(mean(o^2) + eps) * gain * silu(z).
template <class S> Mat<S> gated_rmsnorm(const Mat<S>& o, const Mat<S>& z, const Vec<S>& gain, double eps);

}  // namespace hl::ref
