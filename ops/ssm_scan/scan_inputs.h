// ssm_scan's inputs as its cases draw them, for the ops built on the scan (gdn_output's cases).
#pragma once
#include "ops/registry.h"

namespace hl::gpu {

// q and k heads of unit norm (q scaled by 1/sqrt(d_k)), Gaussian v, beta in (0.05, 0.95), log-decays g in (-2, 0), a
// carried state of std 0.1; params n_k_heads, decode (T == 1), chunk 64, tiled.
OpArgs scan_inputs(std::mt19937_64& g, int64_t T, int64_t nk, int64_t nv, int64_t dk, int64_t dv, bool tiled);

}  // namespace hl::gpu
