// moe_block (vulkan:fused_decode), step 1 of 3: router logits, the shared expert's SwiGLU and its gate. The body in
// moe_block_x.glsl.
#version 450
#include "moe_block_x.glsl"
