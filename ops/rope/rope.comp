// rope (vulkan:neox): partial NeoX rotation. In every head of D dims, pairs (i, i + R/2), i < R/2, rotate
// by (pos0 + t) * inv_freq_i; dims [R, D) are copied. One invocation per rotated pair or copied dim.
//
// Precision: positions reach 262144, where a float angle p * inv_freq is off by ~0.02 rad. The host passes
// each frequency in turns per position as a 64-bit fixed-point fraction F_i = inv_freq_i / (2 pi) * 2^64;
// p * F_i mod 2^64 (exact integer arithmetic, rope_angle.glsl) is the angle's fraction of a turn, reduced to
// [-1/2, 1/2) before it becomes a float. What is left is the float rounding of that reduced angle (<= 1.2e-7 rad)
// and sin/cos's own error on [-pi, pi].
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
#include "common.glsl"
#include "rope_angle.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Freq { uvec2 freq[]; };  // F_i as (low, high) 32-bit words
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push {
  uint n;      // invocations: T * heads * (D - h)
  uint heads;  // per row
  uint D, h;   // head dim, rotated pairs R / 2
  uint pos0;
} pc;

void main() {
  const uint i = hl_group_index() * WG + gl_LocalInvocationID.x;
  if (i >= pc.n) return;
  const uint per = pc.D - pc.h;  // work items per head: h pairs, then D - R copies
  const uint row = i / per, j = i - row * per;  // row = t * heads + h
  const uint base = row * pc.D;
  if (j >= pc.h) {
    y[base + j + pc.h] = x[base + j + pc.h];
    return;
  }
  const uint p = pc.pos0 + row / pc.heads;
  const float ang = hl_rope_angle(p, freq[j]);
  const float c = cos(ang), s = sin(ang);
  const float a = x[base + j], b = x[base + j + pc.h];
  y[base + j] = a * c - b * s;
  y[base + j + pc.h] = b * c + a * s;
}
