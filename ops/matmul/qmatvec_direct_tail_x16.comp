// matmul_add_rmsnorm (vulkan:fused_decode with matmul's x16 set): qmatvec_direct_tail.comp with x as 16-bit fixed point
// and the K-quant units' products as integer dot products (ops/shaders/x16.glsl). The body in qmatvec_direct.glsl.
#version 450
#define QMV_TAIL 1
#define QMV_X16
#include "qmatvec_direct.glsl"
