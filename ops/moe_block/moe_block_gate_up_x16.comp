// moe_block (vulkan:fused_decode with x16 set), step 2 of 3: moe_block_gate_up.glsl with x as 16-bit fixed point and
// the K-quant units' products as integer dot products (ops/shaders/x16.glsl).
#version 450
#define MB_X16
#include "moe_block_gate_up.glsl"
