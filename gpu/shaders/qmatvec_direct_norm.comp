// matmul / lm_head (vulkan:qmatvec_direct) with the add_rmsnorm before it folded in: the input row is
// rmsnorm(x + a (+ b)) * gain, computed while it is staged (qmatvec_direct.glsl, QMV_NORM).
#version 450
#define QMV_NORM
#include "qmatvec_direct.glsl"
