// add_rmsnorm_matmul_group (vulkan:fused_decode): qmatvec_direct's segments on rmsnorm(x + a) * gain, staged by every
// workgroup, with workgroup 0 writing x + a. The body in qmatvec_direct.glsl.
#version 450
#define QMV_NORM 1
#include "qmatvec_direct.glsl"
