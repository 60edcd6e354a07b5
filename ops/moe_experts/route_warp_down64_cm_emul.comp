// moe_experts vulkan:route_pack_warp, down, route_pack_warp.cols 32: each subgroup 32 x 64 outputs (the kernel: route_warp_cm.glsl), with emulated matrices.
#version 450
#extension GL_GOOGLE_include_directive : require  // glslangValidator (glslc enables it itself)
#define HL_CM_EMULATE 1  // emulated matrices, for devices without them (a test hook)
#define QG_WREG 8        // lavapipe's subgroups of 8: eight row runs per invocation
#define QG_MC 4
#define QG_GATED_ACC 0
#define HL_CM_VEC 4u
#include "route_warp_cm.glsl"
