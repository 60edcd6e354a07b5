// ssm_conv: the Gated DeltaNet's causal depthwise convolution with carried state, followed by silu
// (SPEC 4.4 steps 2-3, 6). Tap 0 multiplies the oldest input (PyTorch conv1d orientation, no flip).
#pragma once
#include "common.h"

namespace hl::ref {

// x [T, C] this chunk's projected inputs; w [C, K]; state [K-1, C]: the K-1 inputs before this chunk,
// oldest first (zeros at sequence start), replaced by the last K-1 inputs of [state; x].
// Returns silu(y) with y[t][c] = sum_j w[c][j] * window[t + j][c], window = [state; x], [T, C].
template <class S> Mat<S> ssm_conv(const Mat<S>& x, const Mat<S>& w, Mat<S>& state);

}  // namespace hl::ref
