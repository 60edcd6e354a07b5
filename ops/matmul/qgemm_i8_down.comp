// moe_experts (vulkan:route_pack_i8): the routed down on 8-bit integer dot products, 4 x 4 outputs per invocation, each
// entry's row written (ops/shaders/qgemm_i8.glsl, MODE 1).
#version 450
#define QI_TM 4
#define QI_TN 4
#define QI_GATED 0
#include "qgemm_i8.glsl"
