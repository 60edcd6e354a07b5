// bandwidth experiment, the f16 matrix ceiling: each subgroup runs ITERS rounds of four independent 16x16x16
// f16 x f16 + f32 cooperative-matrix products (4 x 8192 flops per round), operands held in registers.
#version 450
#extension GL_GOOGLE_include_directive : require  // glslangValidator (glslc enables it itself)
#extension GL_KHR_memory_scope_semantics : require
#pragma use_vulkan_memory_model
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
#include "common.glsl"
#include "coopmat.glsl"

layout(std430, binding = 0) writeonly buffer Dst { float dst[]; };
layout(push_constant) uniform Push { uint iters; float a, b; } pc;

shared float16_t tile[2u * 256u];
shared float out_tile[256u * (WG / 8u)];

void main() {
  for (uint i = gl_LocalInvocationID.x; i < 512u; i += WG) tile[i] = float16_t(pc.a + pc.b * float(i % 17u));
  barrier();
  hl_cm_a a;
  hl_cm_b b;
  HL_CM_LOAD_A(a, tile, 0u, HL_CM_ROW_MAJOR, 16u);
  HL_CM_LOAD_B(b, tile, 256u, HL_CM_COL_MAJOR, 16u);
  hl_cm_acc c0 = hl_cm_fill(0.0);
  hl_cm_acc c1 = hl_cm_fill(1.0);
  hl_cm_acc c2 = hl_cm_fill(2.0);
  hl_cm_acc c3 = hl_cm_fill(3.0);
  for (uint k = 0u; k < pc.iters; ++k) {
    c0 = hl_cm_muladd(a, b, c0);
    c1 = hl_cm_muladd(a, b, c1);
    c2 = hl_cm_muladd(a, b, c2);
    c3 = hl_cm_muladd(a, b, c3);
  }
  const uint s = gl_SubgroupID * 256u;
  HL_CM_STORE(out_tile, s, c0, HL_CM_ROW_MAJOR, 16u);
  subgroupMemoryBarrierShared();
  subgroupBarrier();
  float t = out_tile[s + gl_SubgroupInvocationID];
  HL_CM_STORE(out_tile, s, c1, HL_CM_ROW_MAJOR, 16u);
  subgroupMemoryBarrierShared();
  subgroupBarrier();
  t += out_tile[s + gl_SubgroupInvocationID];
  HL_CM_STORE(out_tile, s, c2, HL_CM_ROW_MAJOR, 16u);
  subgroupMemoryBarrierShared();
  subgroupBarrier();
  t += out_tile[s + gl_SubgroupInvocationID];
  HL_CM_STORE(out_tile, s, c3, HL_CM_ROW_MAJOR, 16u);
  subgroupMemoryBarrierShared();
  subgroupBarrier();
  t += out_tile[s + gl_SubgroupInvocationID];
  dst[hl_group_index() * WG + gl_LocalInvocationID.x] = t;
}
