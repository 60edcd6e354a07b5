// moe_block (vulkan:fused_decode), step 2 of 3: the routes and the routed experts' SwiGLU. The body in
// moe_block_gate_up.glsl.
#version 450
#include "moe_block_gate_up.glsl"
