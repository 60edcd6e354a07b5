// matmul / lm_head (vulkan:qmatvec_planar_i8): qmatvec_planar with x rounded to 8 bits per 256 values
// (quantize_x8_k.comp) and 4-way integer dot products: fewer instructions per weight byte. The body in qmatvec_planar.glsl.
#version 450
#extension GL_KHR_shader_subgroup_shuffle : require
#define QMV_I8
#include "qmatvec_planar.glsl"
