// attention, first step of every variant: append this chunk's k, v [T, W] at rows [kv_len, kv_len + T)
// of the caches [capacity, W] (row-major, so it is one contiguous range of T * W floats).
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer K { float k[]; };
layout(std430, binding = 1) readonly buffer V { float v[]; };
layout(std430, binding = 2) buffer KC { float kc[]; };
layout(std430, binding = 3) buffer VC { float vc[]; };
layout(push_constant) uniform Push {
  uint n;      // T * W
  uint start;  // kv_len * W
} pc;

void main() {
  const uint i = hl_group_index() * WG + gl_LocalInvocationID.x;
  if (i >= pc.n) return;
  kc[pc.start + i] = k[i];
  vc[pc.start + i] = v[i];
}
