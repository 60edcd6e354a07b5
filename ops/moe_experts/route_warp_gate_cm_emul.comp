// moe_experts vulkan:route_pack_warp, gate and up with SwiGLU: each subgroup 32 x 16 outputs of gate and of up (the kernel: route_warp_cm.glsl), with emulated matrices.
#version 450
#extension GL_GOOGLE_include_directive : require  // glslangValidator (glslc enables it itself)
#define HL_CM_EMULATE 1  // emulated matrices, for devices without them (a test hook)
#define QG_WREG 4        // lavapipe's subgroups of 8: four row runs per invocation
#define QG_MC 1
#define QG_GATED_ACC 1
#define HL_CM_VEC 4u
#include "route_warp_cm.glsl"
