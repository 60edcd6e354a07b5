// qgemm_gate16_cm.comp with emulated matrices (the kernel: ops/shaders/qgemm_cm.glsl): each subgroup 16 x 32 outputs
// (twice the subgroups of the 32-row kernel for the same tile: fewer accumulators and prefetch slots per invocation) of
// gate and of up.
#version 450
#extension GL_GOOGLE_include_directive : require  // glslangValidator (glslc enables it itself)
#define HL_CM_EMULATE 1  // emulated matrices, for devices without them (a test hook)
#define QG_MR 1
#define QG_MC 2
#define QG_AREG 32  // lavapipe's subgroups of 8: enough slots for the prefetching path
#define QG_WREG 8
#define QG_GATED_ACC 1
#define HL_CM_VEC 4u
#include "qgemm_cm.glsl"
