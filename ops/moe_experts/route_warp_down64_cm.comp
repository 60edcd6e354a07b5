// moe_experts vulkan:route_pack_warp, down, route_pack_warp.cols 32: each subgroup 32 x 64 outputs (the kernel: route_warp_cm.glsl).
#version 450
#extension GL_GOOGLE_include_directive : require  // glslangValidator (glslc enables it itself)
#extension GL_KHR_memory_scope_semantics : require
#pragma use_vulkan_memory_model
#define QG_MC 4
#define QG_GATED_ACC 0
#define HL_CM_VEC 4u
#include "route_warp_cm.glsl"
