// matmul (vulkan:rowdot): y[T, N] = x[T, K] w[N, K]^T for few tokens (decode). One workgroup per output
// row n: each invocation holds a strided share of w's row in registers (read once for every token), then dots it with
// COLS tokens per pass; the passes' sums meet in shared memory behind one barrier.
// KV = K / 4 where K is a multiple of 4: the row read as vec4s at a constant trip count, so every load is issued before
// the first product and each load instruction covers 16 x WG contiguous bytes; 0: a word at a time, K from the push
// constants.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint COLS = 8;  // tokens per pass
layout(constant_id = 2) const uint KV = 0;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 0) readonly buffer X4 { vec4 x4[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 1) readonly buffer W4 { vec4 w4[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push { uint T, K, N; } pc;

const uint PER = KV != 0u ? (KV + WG - 1u) / WG : 1u;  // vec4s per invocation
shared float parts[COLS * WG];  // [token][subgroup]: WG bounds the subgroup count for any subgroup size

void main() {
  const uint n = hl_group_index();
  if (n >= pc.N) return;  // uniform per workgroup
  const uint lid = gl_LocalInvocationID.x;
  vec4 wv[PER];
  if (KV != 0u)
    for (uint i = 0u; i < PER; ++i) wv[i] = w4[n * KV + min(lid + i * WG, KV - 1u)];
  for (uint t0 = 0u; t0 < pc.T; t0 += COLS) {
    float acc[COLS];
    for (uint j = 0u; j < COLS; ++j) acc[j] = 0.0;
    if (KV != 0u) {
      for (uint i = 0u; i < PER; ++i) {
        const uint k = lid + i * WG;
        if (k < KV)
          for (uint j = 0u; j < COLS; ++j)
            if (t0 + j < pc.T) acc[j] += dot(wv[i], x4[(t0 + j) * KV + k]);
      }
    } else {
      for (uint k = lid; k < pc.K; k += WG) {
        const float v = w[n * pc.K + k];
        for (uint j = 0u; j < COLS; ++j)
          if (t0 + j < pc.T) acc[j] += v * x[(t0 + j) * pc.K + k];
      }
    }
    for (uint j = 0u; j < COLS; ++j) {
      if (t0 + j >= pc.T) break;  // uniform
      const float s = subgroupAdd(acc[j]);
      if (subgroupElect()) parts[j * WG + gl_SubgroupID] = s;
    }
    barrier();
    if (lid < COLS && t0 + lid < pc.T) {
      float s = 0.0;
      for (uint i = 0u; i < hl_num_subgroups(); ++i) s += parts[lid * WG + i];
      y[(t0 + lid) * pc.N + n] = s;
    }
    barrier();  // the next pass reuses parts
  }
}
