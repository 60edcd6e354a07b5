// ssm_scan vulkan:chunked_two_pass, its scan pass on cooperative matrices (the kernel: ssm_two_pass_scan.glsl).
#version 450
#extension GL_GOOGLE_include_directive : require  // glslangValidator (glslc enables it itself)
#extension GL_KHR_memory_scope_semantics : require
#pragma use_vulkan_memory_model
#include "ssm_two_pass_scan.glsl"
