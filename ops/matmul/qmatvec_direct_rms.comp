// rms_scaled_matmul (vulkan:fused_decode): qmatvec_direct's segments with each head's 1 / rms, from its partial sums of
// squares, multiplying the products of that head's units. The body in qmatvec_direct.glsl.
#version 450
#define QMV_RMS 1
#include "qmatvec_direct.glsl"
