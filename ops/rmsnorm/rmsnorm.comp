// rmsnorm (vulkan:rowgroup): one workgroup per group of G columns of a row: y = x / rms(x) * gain.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint GC = 2048;  // G, the group's values: the loops' trip count a constant
#define HL_WORKGROUP_SUM_SIZE WG
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Gain { float gain[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push {
  uint groups;  // rows * (cols / G)
  uint G;       // = GC
  float eps;
} pc;

const uint NV = (GC + WG - 1u) / WG;  // values per invocation

void main() {
  const uint grp = hl_group_index();
  if (grp >= pc.groups) return;  // uniform per workgroup
  const uint base = grp * GC, lid = gl_LocalInvocationID.x;
  float v[NV];  // every load first (unrolled, all in flight together), kept for the output
  for (uint j = 0u; j < NV; ++j) v[j] = lid + j * WG < GC ? x[base + lid + j * WG] : 0.0;
  float s = 0.0;
  for (uint j = 0u; j < NV; ++j) s += v[j] * v[j];
  s = hl_workgroup_sum(s);
  const float inv = 1.0 / sqrt(s / float(GC) + pc.eps);
  for (uint j = 0u; j < NV; ++j)
    if (lid + j * WG < GC) y[base + lid + j * WG] = v[j] * inv * gain[lid + j * WG];
}
