// moe_block (vulkan:fused_decode), step 3 of 3: the routed and shared downs, summed. The body in moe_block_down.glsl.
#version 450
#include "moe_block_down.glsl"
