// ssm_two_pass_scan.glsl with emulated matrices (coopmat.glsl, HL_CM_EMULATE), for lavapipe (tunable
// ssm_scan.chunked_two_pass.cm_emulate = 1; a test hook).
#version 450
#extension GL_GOOGLE_include_directive : require  // glslangValidator (glslc enables it itself)
#define HL_CM_EMULATE 1
#include "ssm_two_pass_scan.glsl"
