// moe_block's Vulkan variant, what the plan executor asks of it before fusing a block (vulkan.cpp).
#pragma once
#include "model/weights.h"

namespace hl::gpu {

// Whether vulkan:fused_decode takes this block's weights: every one a type its row kernels decode, in whole 32-value units.
bool moe_block_fused_takes(const WeightRef& router, const ExpertWeights& experts, const ExpertWeights& shared);

}  // namespace hl::gpu
