// moe_block_add_rmsnorm (vulkan:fused_decode): moe_block's step 3 (moe_block_down.glsl), then the residual add and
// rmsnorm of its output by the last workgroup (ops/shaders/tail_add_rmsnorm.glsl).
#version 450
#define MBD_TAIL 1
#include "moe_block_down.glsl"
