// matmul / lm_head / matmul_group (vulkan:qmatvec_direct): the decode mat-vec reading ggml blocks straight into
// registers. The body, and why, in qmatvec_direct.glsl.
#version 450
#include "qmatvec_direct.glsl"
