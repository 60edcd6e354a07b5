// moe_experts vulkan:route_pack_coopmat, down (the kernel: ops/shaders/qgemm_cm.glsl): each subgroup 16 x 64 outputs
// (twice the subgroups of the 32-row kernel for the same tile: fewer accumulators and prefetch slots per invocation).
#version 450
#extension GL_GOOGLE_include_directive : require  // glslangValidator (glslc enables it itself)
#extension GL_KHR_memory_scope_semantics : require
#pragma use_vulkan_memory_model
#define QG_MR 1
#define QG_MC 4
#define QG_GATED_ACC 0
#define HL_CM_VEC 4u
#include "qgemm_cm.glsl"
