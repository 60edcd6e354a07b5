// moe_block (vulkan:fused_decode with x16 set), step 1: moe_block_x.comp with x also staged as 16-bit fixed point and the
// shared expert's K-quant rows as integer dot products (ops/shaders/x16.glsl).
#version 450
#define MB_X16
#include "moe_block_x.glsl"
