// vulkan:qgemm_coopmat with split K: y = the sum of the KS partial results [KS, n] its splits wrote, the slices
// added in order (the same sum on every device). KS and the values per invocation are specialization constants: the
// loops unroll and every slice's loads are in flight together (a loop bounded by a push constant issued them a
// round trip apart).
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const uint KS = 2;   // the splits
layout(constant_id = 2) const uint PER = 4;  // values per invocation, WG apart (each load instruction contiguous)
#include "common.glsl"

layout(std430, binding = 0) readonly buffer P { float part[]; };  // [KS, n]
layout(std430, binding = 1) writeonly buffer Y { float y[]; };    // [n]
layout(push_constant) uniform Push { uint n; } pc;

void main() {
  const uint base = hl_group_index() * WG * PER + gl_LocalInvocationID.x;
  float v[KS * PER];
  for (uint j = 0u; j < PER; ++j) {
    const uint i = base + j * WG;
    for (uint k = 0u; k < KS; ++k) v[k * PER + j] = i < pc.n ? part[k * pc.n + i] : 0.0;
  }
  for (uint j = 0u; j < PER; ++j) {
    const uint i = base + j * WG;
    float s = v[j];
    for (uint k = 1u; k < KS; ++k) s += v[k * PER + j];
    if (i < pc.n) y[i] = s;
  }
}
