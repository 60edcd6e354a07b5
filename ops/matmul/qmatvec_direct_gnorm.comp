// gated_rmsnorm_matmul (vulkan:fused_decode): qmatvec_direct's segments on the gated norm of the scan's output,
// o / rms(o) * gain * silu(z) per value head, staged by every workgroup. The body in qmatvec_direct.glsl.
#version 450
#define QMV_GNORM 1
#include "qmatvec_direct.glsl"
