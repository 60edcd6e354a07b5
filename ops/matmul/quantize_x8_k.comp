// Activations to 8-bit integers with one scale per 256 values (as ggml's Q8_K, which its k-quant dot products
// use), for qmatvec_planar_i8: a 64-value chunk of a row then meets one x scale, so its runs sum in integers.
// x[T, K] in blocks of 256: d = max|x| / 127, q = round(x / d) in [-127, 127], four per word, and the integer
// sum of q per 16 values. One invocation per 16 values, a block's 16 in one workgroup (WG a multiple of 16).
// (A separate dispatch: rounding x again in every workgroup of the mat-vec measured slower.)
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { vec4 x4[]; };   // [T, K]
layout(std430, binding = 1) writeonly buffer XQ { uint xq[]; };  // [T, K / 4]
layout(std430, binding = 2) writeonly buffer XD { float xd[]; };  // [T, K / 256]
layout(std430, binding = 3) writeonly buffer XS { int xs[]; };    // [T, K / 16]
layout(push_constant) uniform Push { uint runs; } pc;             // T * K / 16

shared float amax_run[WG];

void main() {
  const uint l = gl_LocalInvocationID.x, r = hl_group_index() * WG + l, rr = min(r, pc.runs - 1u);
  vec4 v[4];
  vec4 m = vec4(0.0);
  for (uint k = 0u; k < 4u; ++k) {
    v[k] = x4[4u * rr + k];
    m = max(m, abs(v[k]));
  }
  amax_run[l] = max(max(m.x, m.y), max(m.z, m.w));
  barrier();
  float amax = 0.0;
  for (uint i = l & ~15u; i < (l & ~15u) + 16u; ++i) amax = max(amax, amax_run[i]);
  if (r >= pc.runs) return;
  const float inv = amax > 0.0 ? 127.0 / amax : 0.0;
  int sum = 0;
  for (uint k = 0u; k < 4u; ++k) {
    const ivec4 q = clamp(ivec4(round(v[k] * inv)), -127, 127);
    xq[4u * r + k] = uint(q.x & 255) | (uint(q.y & 255) << 8u) | (uint(q.z & 255) << 16u) | (uint(q.w & 255) << 24u);
    sum += q.x + q.y + q.z + q.w;
  }
  xs[r] = sum;
  if ((l & 15u) == 0u) xd[r >> 4u] = amax / 127.0;
}
