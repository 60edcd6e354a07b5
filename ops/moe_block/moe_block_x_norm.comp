// add_rmsnorm_moe_block (vulkan:fused_decode), step 1 of 3: moe_block_x.comp on rmsnorm(x + a) * gain, staged by every
// workgroup, the sum and the normed row written for steps 2 and 3. The body in moe_block_x.glsl.
#version 450
#define MB_NORM 1
#include "moe_block_x.glsl"
