// vulkan:qgemm_coopmat with split K: y = the sum of the KS partial results [KS, n] its splits wrote, the slices
// added in order (the same sum on every device).
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer P { float part[]; };  // [ks, n]
layout(std430, binding = 1) writeonly buffer Y { float y[]; };    // [n]
layout(push_constant) uniform Push { uint n, ks; } pc;

void main() {
  const uint i = hl_group_index() * WG + gl_LocalInvocationID.x;
  if (i >= pc.n) return;
  float s = part[i];
  for (uint k = 1u; k < pc.ks; ++k) s += part[k * pc.n + i];
  y[i] = s;
}
