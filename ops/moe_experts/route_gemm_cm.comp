// moe_experts vulkan:route_pack_coopmat's grouped GEMM on cooperative matrices (the kernel: route_gemm_cm.glsl).
#version 450
#extension GL_GOOGLE_include_directive : require  // glslangValidator (glslc enables it itself)
#extension GL_KHR_memory_scope_semantics : require
#pragma use_vulkan_memory_model
#include "route_gemm_cm.glsl"
