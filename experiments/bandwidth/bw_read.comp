// bandwidth experiment: read n vec4s from base once (grid-strided, coalesced), one partial sum per workgroup so
// the reads cannot be optimised away. Binding 2 is bound, not read: a chain of reads binds the previous read's partials
// there, which orders each read after the one before it (runtime/device.h).
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
#define HL_WORKGROUP_SUM_SIZE WG
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Src { vec4 src[]; };
layout(std430, binding = 1) writeonly buffer Dst { float partial[]; };
layout(std430, binding = 2) readonly buffer Prev { float prev[]; };
layout(push_constant) uniform Push { uint n, groups, base; } pc;  // base: the first vec4 read

void main() {
  const uint g = hl_group_index();
  vec4 acc = vec4(0.0);
  for (uint i = g * WG + gl_LocalInvocationID.x; i < pc.n; i += pc.groups * WG) acc += src[pc.base + i];
  const float s = hl_workgroup_sum(acc.x + acc.y + acc.z + acc.w);
  if (gl_LocalInvocationID.x == 0u) partial[g] = s;
}
