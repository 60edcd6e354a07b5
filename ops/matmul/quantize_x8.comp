// Activations to 8-bit integers for the integer-dot-product kernels (qmatvec_i8_staged): x[T, K] cut into blocks of
// 32 values, each stored as d = max|x| / 127 and q = round(x / d) in [-127, 127], four per 32-bit word.
// Beside them, d * sum(q) per 16 values: the kernels need it to apply a run's offset (K-quant mins, Q6_K's
// -32) without touching x again. One invocation per block of 32.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { vec4 x4[]; };   // [T, K]
layout(std430, binding = 1) writeonly buffer XQ { uint xq[]; };  // [T, K / 4]
layout(std430, binding = 2) writeonly buffer XD { float xd[]; };  // [T, K / 32]
layout(std430, binding = 3) writeonly buffer XS { float xs[]; };  // [T, K / 16]
layout(push_constant) uniform Push { uint blocks; } pc;  // T * K / 32

void main() {
  const uint b = hl_group_index() * WG + gl_LocalInvocationID.x;
  if (b >= pc.blocks) return;
  vec4 v[8];
  float amax = 0.0;
  for (uint k = 0u; k < 8u; ++k) {
    v[k] = x4[8u * b + k];
    amax = max(amax, max(max(abs(v[k].x), abs(v[k].y)), max(abs(v[k].z), abs(v[k].w))));
  }
  const float d = amax / 127.0, inv = amax > 0.0 ? 127.0 / amax : 0.0;
  int s0 = 0, s1 = 0;
  for (uint k = 0u; k < 8u; ++k) {
    const ivec4 q = clamp(ivec4(round(v[k] * inv)), -127, 127);
    xq[8u * b + k] = uint(q.x & 255) | (uint(q.y & 255) << 8u) | (uint(q.z & 255) << 16u) | (uint(q.w & 255) << 24u);
    if (k < 4u) s0 += q.x + q.y + q.z + q.w; else s1 += q.x + q.y + q.z + q.w;
  }
  xd[b] = d;
  xs[2u * b] = d * float(s0);
  xs[2u * b + 1u] = d * float(s1);
}
