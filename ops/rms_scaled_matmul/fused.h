// What the plan executor asks of rms_scaled_matmul's vulkan:fused_decode before it leaves the Gated DeltaNet's output norm
// to the output projection (ops/rms_scaled_matmul/vulkan.cpp).
#pragma once
#include "ops/registry.h"

namespace hl::gpu {

// Whether the variant takes the projection w after heads of d columns: ggml blocks (or f32/f16 rows) whose 32-value
// units each lie within one head.
bool rms_scaled_matmul_fused_takes(const WeightRef& w, int64_t d);

}  // namespace hl::gpu
