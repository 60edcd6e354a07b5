// matmul_add_rmsnorm (vulkan:fused_decode): qmatvec_direct.glsl's mat-vec of one weight, then the residual add and
// rmsnorm of its output by the last workgroup (ops/shaders/tail_add_rmsnorm.glsl).
#version 450
#define QMV_TAIL 1
#include "qmatvec_direct.glsl"
