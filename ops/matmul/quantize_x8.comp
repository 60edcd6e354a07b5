// Activations to 8-bit integers for the integer-dot-product kernels (qmatvec_i8_staged, qgemm_i8): x[T, K] cut into
// blocks of 32 values, each stored as d = max|x| / 127 and q = round(x / d) in [-127, 127], four per 32-bit word.
// Beside them, d * sum(q) per 16 values: the kernels need it to apply a run's offset (K-quant mins, Q6_K's -32)
// without touching x again. Eight neighbouring lanes per block, each one vec4 (a subgroup's loads and stores
// contiguous), the block's max and sums by xor shuffles within the eight (any subgroup size of at least 8).
#version 450
#extension GL_KHR_shader_subgroup_shuffle : require
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;  // a multiple of 8
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { vec4 x4[]; };   // [T, K]
layout(std430, binding = 1) writeonly buffer XQ { uint xq[]; };  // [T, K / 4]
layout(std430, binding = 2) writeonly buffer XD { float xd[]; };  // [T, K / 32]
layout(std430, binding = 3) writeonly buffer XS { float xs[]; };  // [T, K / 16]
layout(push_constant) uniform Push { uint blocks; } pc;  // T * K / 32

void main() {
  const uint i = hl_group_index() * WG + gl_LocalInvocationID.x, b = i / 8u, l = i % 8u;
  if (b >= pc.blocks) return;  // whole groups of eight: blocks * 8 lanes, WG a multiple of 8
  const vec4 v = x4[i];
  float amax = max(max(abs(v.x), abs(v.y)), max(abs(v.z), abs(v.w)));
  for (uint o = 1u; o < 8u; o <<= 1u) amax = max(amax, subgroupShuffleXor(amax, o));
  const float d = amax / 127.0, inv = amax > 0.0 ? 127.0 / amax : 0.0;
  const ivec4 q = clamp(ivec4(round(v * inv)), -127, 127);
  xq[i] = uint(q.x & 255) | (uint(q.y & 255) << 8u) | (uint(q.z & 255) << 16u) | (uint(q.w & 255) << 24u);
  int s = q.x + q.y + q.z + q.w;  // summed over the four lanes of each 16 values
  for (uint o = 1u; o < 4u; o <<= 1u) s += subgroupShuffleXor(s, o);
  if (l == 0u) xd[b] = d;
  if (l % 4u == 0u) xs[2u * b + l / 4u] = d * float(s);
}
