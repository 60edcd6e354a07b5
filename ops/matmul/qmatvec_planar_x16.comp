// matmul / lm_head (vulkan:qmatvec_planar with x16): qmatvec_planar with x as 16-bit fixed point per run of 16 values
// and integer dot products (two per 4 values): the instructions of qmatvec_planar_i8 within x16's ~1e-5. The body in
// qmatvec_planar.glsl.
#version 450
#extension GL_KHR_shader_subgroup_shuffle : require
#define QMV_X16
#include "qmatvec_planar.glsl"
