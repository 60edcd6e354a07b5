// moe_block (vulkan:fused_decode with x16 set), step 3 of 3: moe_block_down.glsl with hmid and hs as 16-bit fixed
// point and the K-quant units' products as integer dot products (ops/shaders/x16.glsl).
#version 450
#define MBD_X16 1
#include "moe_block_down.glsl"
