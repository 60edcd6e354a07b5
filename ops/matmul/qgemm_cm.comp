// matmul / lm_head vulkan:qgemm_coopmat, prompt chunks (the kernel: ops/shaders/qgemm_cm.glsl): each subgroup 32 x 64 outputs.
#version 450
#extension GL_GOOGLE_include_directive : require  // glslangValidator (glslc enables it itself)
#extension GL_KHR_memory_scope_semantics : require
#pragma use_vulkan_memory_model
#define QG_MR 2
#define QG_MC 4
#define QG_GATED_ACC 0
#define HL_CM_VEC 4u
#include "qgemm_cm.glsl"
