// attention vulkan:flash_rows's prompt-chunk kernel on cooperative matrices (the kernel: attention_flash_rows_cm.glsl).
#version 450
#extension GL_GOOGLE_include_directive : require  // glslangValidator (glslc enables it itself)
#extension GL_KHR_memory_scope_semantics : require
#pragma use_vulkan_memory_model
#include "attention_flash_rows_cm.glsl"
