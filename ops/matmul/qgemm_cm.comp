// matmul / lm_head (vulkan:qgemm_coopmat) and moe_experts / shared_expert (vulkan:route_pack_coopmat): the
// quantized GEMM on cooperative matrices (the kernel: ops/shaders/qgemm_cm.glsl).
#version 450
#extension GL_GOOGLE_include_directive : require  // glslangValidator (glslc enables it itself)
#extension GL_KHR_memory_scope_semantics : require
#pragma use_vulkan_memory_model
#include "qgemm_cm.glsl"
