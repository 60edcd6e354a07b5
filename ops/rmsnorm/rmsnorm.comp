// rmsnorm (vulkan:rowgroup): one workgroup per group of G columns of a row: y = x / rms(x) * gain.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
#define HL_WORKGROUP_SUM_SIZE WG
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Gain { float gain[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push {
  uint groups;  // rows * (cols / G)
  uint G;
  float eps;
} pc;

void main() {
  const uint grp = hl_group_index();
  if (grp >= pc.groups) return;  // uniform per workgroup
  const uint base = grp * pc.G;
  float s = 0.0;
  for (uint i = gl_LocalInvocationID.x; i < pc.G; i += WG) s += x[base + i] * x[base + i];
  s = hl_workgroup_sum(s);
  const float inv = 1.0 / sqrt(s / float(pc.G) + pc.eps);
  for (uint i = gl_LocalInvocationID.x; i < pc.G; i += WG) y[base + i] = x[base + i] * inv * gain[i];
}
