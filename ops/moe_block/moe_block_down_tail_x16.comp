// moe_block_add_rmsnorm (vulkan:fused_decode with moe_block's x16 set): moe_block_down_tail.comp with hmid and hs as
// 16-bit fixed point and the K-quant units' products as integer dot products (ops/shaders/x16.glsl).
#version 450
#define MBD_TAIL 1
#define MBD_X16 1
#include "moe_block_down.glsl"
