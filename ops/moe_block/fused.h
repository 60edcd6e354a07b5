// moe_block's Vulkan variant, what the plan executor asks of it before fusing a block (vulkan.cpp).
#pragma once
#include "model/weights.h"
#include "ops/matmul/quant_rows.h"

namespace hl::gpu {

// Whether vulkan:fused_decode takes this block's weights: every one a type its row kernels decode, in whole 32-value units.
bool moe_block_fused_takes(const WeightRef& router, const ExpertWeights& experts, const ExpertWeights& shared);

// vulkan:fused_decode's three dispatches on moe_block's arguments; returns y. With `head`, x is the residual and the
// first stages rmsnorm(x + head.a) * head.gain (moe_block_x_norm.comp), for add_rmsnorm_moe_block.
Tensor moe_block_fused(VariantCtx& c, OpArgs& a, HeadAddNorm* head);

}  // namespace hl::gpu
