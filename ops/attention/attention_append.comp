// attention, first step of every variant: append this chunk's k, v [T, W] at rows [kv_len, kv_len + T)
// of the caches [capacity, W] (row-major, so it is one contiguous range of T * W floats).
#version 450
#extension GL_EXT_control_flow_attributes : require
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

const uint PER = 4u;  // floats per invocation: their loads in flight together

void main() {
  const uint i0 = hl_group_index() * (PER * WG) + gl_LocalInvocationID.x;
  float xk[PER], xv[PER];
  [[unroll]] for (uint j = 0u; j < PER; ++j) {
    const uint i = i0 + j * WG;
    if (i < pc.n) xk[j] = k[i], xv[j] = v[i];
  }
  [[unroll]] for (uint j = 0u; j < PER; ++j) {
    const uint i = i0 + j * WG;
    if (i < pc.n) kc[pc.start + i] = xk[j], vc[pc.start + i] = xv[j];
  }
}
