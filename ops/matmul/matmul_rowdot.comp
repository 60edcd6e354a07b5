// matmul (vulkan:rowdot): y[T, N] = x[T, K] w[N, K]^T for few tokens (decode). One workgroup per output
// row n: it streams w's row once per block of COLS tokens, each invocation a strided share of K.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint COLS = 8;  // tokens per pass over the weight row
#define HL_WORKGROUP_SUM_SIZE WG
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push { uint T, K, N; } pc;

void main() {
  const uint n = hl_group_index();
  if (n >= pc.N) return;  // uniform per workgroup
  for (uint t0 = 0u; t0 < pc.T; t0 += COLS) {
    float acc[COLS];
    for (uint j = 0u; j < COLS; ++j) acc[j] = 0.0;
    for (uint k = gl_LocalInvocationID.x; k < pc.K; k += WG) {
      const float wv = w[n * pc.K + k];
      for (uint j = 0u; j < COLS; ++j)
        if (t0 + j < pc.T) acc[j] += wv * x[(t0 + j) * pc.K + k];
    }
    for (uint j = 0u; j < COLS; ++j) {
      const float s = hl_workgroup_sum(acc[j]);
      if (gl_LocalInvocationID.x == 0u && t0 + j < pc.T) y[(t0 + j) * pc.N + n] = s;
    }
  }
}
