// matmul / lm_head (vulkan:qgemm_i8): prompt chunks on 8-bit integer dot products, 4 x 8 outputs per invocation
// (ops/shaders/qgemm_i8.glsl, MODE 0).
#version 450
#define QI_TM 4
#define QI_TN 8
#define QI_GATED 0
#include "qgemm_i8.glsl"
