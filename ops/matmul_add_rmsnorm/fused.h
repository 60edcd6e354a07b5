// What the plan executor asks of matmul_add_rmsnorm's Vulkan variant before folding a projection into it.
#pragma once
#include "ops/registry.h"

namespace hl::gpu {

bool matmul_add_rmsnorm_fused_takes(const WeightRef& w);  // vulkan.cpp

}  // namespace hl::gpu
