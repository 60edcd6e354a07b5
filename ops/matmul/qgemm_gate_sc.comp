// moe_experts vulkan:route_pack_qgemm, gate and up with SwiGLU on scalar FMAs (the kernel: ops/shaders/qgemm_cm.glsl
// with QG_SCALAR, weight tiles in f16): each invocation 4 x 4 outputs of gate and of up.
#version 450
#extension GL_GOOGLE_include_directive : require  // glslangValidator (glslc enables it itself)
#define QG_SCALAR 1
#define QG_F16_WEIGHTS 1
#define QG_TM 4
#define QG_TN 4
#define QG_GATED_ACC 1
#define QG_AREG 8
#define QG_WREG 4
#include "qgemm_cm.glsl"
