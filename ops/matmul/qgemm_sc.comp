// matmul / lm_head vulkan:qgemm, prompt chunks on scalar FMAs (the kernel: ops/shaders/qgemm_cm.glsl with QG_SCALAR):
// each invocation 4 x 8 outputs.
#version 450
#extension GL_GOOGLE_include_directive : require  // glslangValidator (glslc enables it itself)
#define QG_SCALAR 1
#define QG_TM 4
#define QG_TN 8
#define QG_GATED_ACC 0
#define QG_AREG 8
#define QG_WREG 4
#include "qgemm_cm.glsl"
