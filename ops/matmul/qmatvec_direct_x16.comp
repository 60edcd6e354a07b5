// matmul / matmul_group (vulkan:qmatvec_direct with x16 set): qmatvec_direct with x staged as 16-bit fixed point and
// the K-quant units' products as integer dot products (ops/shaders/x16.glsl). The body in qmatvec_direct.glsl.
#version 450
#define QMV_X16
#include "qmatvec_direct.glsl"
