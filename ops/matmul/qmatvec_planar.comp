// matmul / lm_head (vulkan:qmatvec_planar): the decode mat-vec on Q6_K weights in planar rows, x in f32, exact
// f32 products. The body, and why, in qmatvec_planar.glsl.
#version 450
#extension GL_KHR_shader_subgroup_shuffle : require
#include "qmatvec_planar.glsl"
