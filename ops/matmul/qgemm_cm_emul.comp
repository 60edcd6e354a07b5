// qgemm_cm.glsl with emulated matrices (coopmat.glsl, HL_CM_EMULATE): the same tiling and f16 staging on devices
// without cooperative matrices (lavapipe in CI; tunable <op>.<variant>.cm_emulate = 1).
#version 450
#define HL_CM_EMULATE 1
#include "qgemm_cm.glsl"
