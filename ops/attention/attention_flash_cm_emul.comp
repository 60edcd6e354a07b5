// attention_flash_cm.glsl with emulated matrices (coopmat.glsl, HL_CM_EMULATE): runs anywhere with f16 shader
// arithmetic, so that lavapipe checks the kernel's tiling, layouts, strides and barriers (tunable
// attention.flash_coopmat.cm_emulate = 1; a test hook).
#version 450
#extension GL_GOOGLE_include_directive : require  // glslangValidator (glslc enables it itself)
#define HL_CM_EMULATE 1
#include "attention_flash_cm.glsl"
