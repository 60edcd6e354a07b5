// matmul (vulkan:qnarrow): y[T, N] = x[T, K] w[N, K]^T for prompt chunks of few output rows (the linear attention's
// b and a gates, 32 rows): a GEMM tile there is mostly padding. A workgroup takes ROWS rows for TOKENS tokens and
// splits K over its invocations: invocation (r, g) decodes row r's units g, g + G, ... once each (bit-exact values, in
// registers) and dots them with every token's x; the G partial sums of each output meet in shared memory.
// x is read straight from memory: the ROWS invocations sharing a unit read the same values.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const uint TYPE = 12;   // ggml type id (0: f32 rows)
layout(constant_id = 2) const uint ROWS = 32;   // rows per workgroup (WG % ROWS == 0)
layout(constant_id = 3) const uint TOKENS = 8;  // tokens per workgroup
#include "common.glsl"

const uint G = WG / ROWS;  // invocations sharing a row, each a 1/G share of its units

layout(std430, binding = 0) readonly buffer X { vec4 x4[]; };  // [T, K]
layout(std430, binding = 1) readonly buffer W { uint wq[]; };  // raw rows (WeightStore::device_raw)
layout(std430, binding = 1) readonly buffer W4 { uvec4 wq4[]; };  // the same, 16 bytes at a time
layout(std430, binding = 2) writeonly buffer Y { float y[]; };  // [T, N]
layout(push_constant) uniform Push { uint T, K, N, row_bytes, row_tiles; } pc;

shared float part[G][TOKENS][ROWS];
#define HLQ_WORD(buf, i) wq[i]
#define HLQ_UVEC4(buf, i) wq4[i]
#include "quant_blocks.glsl"

void main() {
  const uint grp = hl_group_index();
  if (grp >= pc.row_tiles * ((pc.T + TOKENS - 1u) / TOKENS)) return;  // uniform per workgroup
  const uint row0 = (grp % pc.row_tiles) * ROWS, t0 = (grp / pc.row_tiles) * TOKENS;
  const uint lid = gl_LocalInvocationID.x, r = lid % ROWS, g = lid / ROWS, units = pc.K / 32u;
  const bool live = row0 + r < pc.N;
  float acc[TOKENS];
  for (uint t = 0u; t < TOKENS; ++t) acc[t] = 0.0;
  for (uint u = g; u < units; u += G) {
    vec4 v[8];
    if (live) {
      vec4 q[8], ms;
      hlq_unit(TYPE, 0u, (row0 + r) * pc.row_bytes, u, q, ms);
      hlq_dequant(q, ms, v);
    } else {
      for (uint k = 0u; k < 8u; ++k) v[k] = vec4(0.0);
    }
    const uvec2 runs = hlq_unit_runs(TYPE, u) / 4u;  // each run 16 consecutive values: 4 aligned vec4
    for (uint t = 0u; t < TOKENS; ++t) {
      const uint b = min(t0 + t, pc.T - 1u) * (pc.K / 4u);  // rows past T read the last one, never stored
      float s = 0.0;
      for (uint k = 0u; k < 4u; ++k) s += dot(v[k], x4[b + runs.x + k]) + dot(v[4u + k], x4[b + runs.y + k]);
      acc[t] += s;
    }
  }
  for (uint t = 0u; t < TOKENS; ++t) part[g][t][r] = acc[t];
  barrier();
  for (uint i = lid; i < TOKENS * ROWS; i += WG) {
    const uint t = i / ROWS, rr = i % ROWS;
    float s = 0.0;
    for (uint k = 0u; k < G; ++k) s += part[k][t][rr];
    if (t0 + t < pc.T && row0 + rr < pc.N) y[(t0 + t) * pc.N + row0 + rr] = s;
  }
}
