// What the plan executor asks of gated_rmsnorm_matmul's vulkan:fused_decode before it folds the norm into the output
// projection (ops/gated_rmsnorm_matmul/vulkan.cpp).
#pragma once
#include "ops/registry.h"

namespace hl::gpu {

// Whether the variant takes the output projection w after heads of dv columns: ggml blocks (or f32/f16 rows) whose
// 32-value units each lie within one head.
bool gated_rmsnorm_matmul_fused_takes(const WeightRef& w, int64_t dv);

}  // namespace hl::gpu
