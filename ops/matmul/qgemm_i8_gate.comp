// moe_experts (vulkan:route_pack_i8): the routed gate and up with SwiGLU in the epilogue on 8-bit integer dot products,
// 4 x 4 outputs of each per invocation (ops/shaders/qgemm_i8.glsl, MODE 1).
#version 450
#define QI_TM 4
#define QI_TN 4
#define QI_GATED 1
#include "qgemm_i8.glsl"
