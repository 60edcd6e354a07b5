// matmul_group: what the plan executor and its variants share (op.cpp, vulkan.cpp).
#pragma once
#include "ops/registry.h"

namespace hl::gpu {

// The call's weights w0 .. w{n-1}, 2 <= n <= 4, in order; an error naming `what` otherwise.
std::vector<WeightRef> matmul_group_weights(const OpArgs& a, const std::string& what);
// Whether vulkan:qmatvec_direct takes these weights: every one f32, f16 or ggml blocks of whole 32-value units.
bool matmul_group_takes(const std::vector<WeightRef>& ws);

}  // namespace hl::gpu
