// qgemm_gate_cm.comp with emulated matrices (the kernel: ops/shaders/qgemm_cm.glsl): each subgroup 32 x 32 outputs of gate and of up.
#version 450
#extension GL_GOOGLE_include_directive : require  // glslangValidator (glslc enables it itself)
#define HL_CM_EMULATE 1  // emulated matrices, for devices without them (a test hook)
#define QG_MR 2
#define QG_MC 2
#define QG_AREG 32  // lavapipe's subgroups of 8: enough slots for the prefetching path
#define QG_WREG 8
#define QG_GATED_ACC 1
#define HL_CM_VEC 4u
#include "qgemm_cm.glsl"
