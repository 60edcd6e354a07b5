// moe_block (vulkan:fused_decode with steps 2), step 2 of 2: the routes, the routed experts' SwiGLU and down's part of
// each workgroup's rows, summed into y (moe_block_gate_up.glsl's MB_DOWN).
#version 450
#define MB_DOWN
#include "moe_block_gate_up.glsl"
