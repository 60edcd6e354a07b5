// moe_experts vulkan:route_pack_warp, gate and up with SwiGLU, route_pack_warp.cols 32: each subgroup 32 x 32 outputs of gate and of up (the kernel: route_warp_cm.glsl), with emulated matrices.
#version 450
#extension GL_GOOGLE_include_directive : require  // glslangValidator (glslc enables it itself)
#define HL_CM_EMULATE 1  // emulated matrices, for devices without them (a test hook)
#define QG_WREG 8        // lavapipe's subgroups of 8: eight row runs per invocation
#define QG_MC 2
#define QG_GATED_ACC 1
#define HL_CM_VEC 4u
#include "route_warp_cm.glsl"
