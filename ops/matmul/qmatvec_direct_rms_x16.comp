// rms_scaled_matmul (vulkan:fused_decode with x16 set): qmatvec_direct_rms.comp with x staged as 16-bit fixed point and
// the K-quant units' products as integer dot products (ops/shaders/x16.glsl).
#version 450
#define QMV_RMS 1
#define QMV_X16
#include "qmatvec_direct.glsl"
