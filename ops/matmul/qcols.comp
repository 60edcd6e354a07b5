// matmul / lm_head (vulkan:qcols): y[T, N] = x[T, K] w[N, K]^T with w in ggml blocks (quant_blocks.glsl), for
// prompt chunks. A workgroup computes ROWS rows x up to COLS tokens: per step of UNITS units (32 values each)
// it dequantizes its ROWS rows' units into shared memory once (bit-exact values) and reuses them for all
// COLS columns, whose x values are staged beside them; each invocation accumulates TM rows x TN columns in
// registers (f32), so each shared value read feeds several multiply-adds.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint TYPE = 12;  // ggml type id
layout(constant_id = 2) const uint ROWS = 32;  // rows of w per workgroup
layout(constant_id = 3) const uint COLS = 32;  // tokens per workgroup (MAX_COLS)
layout(constant_id = 4) const uint TM = 2;     // rows per invocation (ROWS % TM == 0, WG % (ROWS / TM) == 0)
layout(constant_id = 5) const uint UNITS = 2;  // units per step
#include "common.glsl"

const uint BK = 32u * UNITS, RT = ROWS / TM, CT = WG / RT, TN = (COLS + CT - 1u) / CT;

layout(std430, binding = 0) readonly buffer X { float x[]; };  // [T, K]
layout(std430, binding = 1) readonly buffer W { uint wq[]; };  // raw rows (WeightStore::device_raw)
layout(std430, binding = 2) writeonly buffer Y { float y[]; };  // [T, N]
layout(push_constant) uniform Push { uint T, K, N, row_bytes, col_chunks; } pc;

shared float ws[ROWS][BK + 1u];  // +1: rows written by consecutive invocations fall in different banks
shared float xs[COLS][BK + 1u];
#define HLQ_WORD(buf, i) wq[i]
#include "quant_blocks.glsl"

void main() {
  const uint g = hl_group_index();
  if (g >= (pc.N + ROWS - 1u) / ROWS * pc.col_chunks) return;  // uniform per workgroup
  const uint row0 = (g / pc.col_chunks) * ROWS, t0 = (g % pc.col_chunks) * COLS, units = pc.K / 32u;
  const uint lid = gl_LocalInvocationID.x, tr = lid % RT, tc = lid / RT;
  float acc[TM][TN];
  for (uint i = 0u; i < TM; ++i)
    for (uint j = 0u; j < TN; ++j) acc[i][j] = 0.0;
  for (uint u0 = 0u; u0 < units; u0 += UNITS) {
    for (uint d = lid; d < ROWS * UNITS; d += WG) {  // one (row, unit) per invocation
      const uint r = d % ROWS, s = d / ROWS;
      vec4 v[8];
      if (row0 + r < pc.N && u0 + s < units) {
        vec4 q[8], ms;
        hlq_unit(TYPE, 0u, (row0 + r) * pc.row_bytes, u0 + s, q, ms);
        hlq_dequant(q, ms, v);
      } else {
        for (uint k = 0u; k < 8u; ++k) v[k] = vec4(0.0);
      }
      for (uint k = 0u; k < 8u; ++k)
        for (uint c = 0u; c < 4u; ++c) ws[r][32u * s + 4u * k + c] = v[k][c];
    }
    for (uint i = lid; i < COLS * BK; i += WG) {  // x in the units' value order
      const uint c = i / BK, kk = i % BK, s = kk / 32u, e = kk % 32u;
      float v = 0.0;
      if (t0 + c < pc.T && u0 + s < units) {
        const uvec2 runs = hlq_unit_runs(TYPE, u0 + s);
        v = x[(t0 + c) * pc.K + (e < 16u ? runs.x + e : runs.y + e - 16u)];
      }
      xs[c][kk] = v;
    }
    barrier();
    float part[TM][TN];  // this step's sums, added whole: shorter f32 chains than one running sum over K
    for (uint kk = 0u; kk < BK; ++kk) {
      float a[TM], b[TN];
      for (uint i = 0u; i < TM; ++i) a[i] = ws[tr + i * RT][kk];
      for (uint j = 0u; j < TN; ++j) b[j] = tc + j * CT < COLS ? xs[tc + j * CT][kk] : 0.0;
      for (uint i = 0u; i < TM; ++i)
        for (uint j = 0u; j < TN; ++j) part[i][j] = kk == 0u ? a[i] * b[j] : part[i][j] + a[i] * b[j];
    }
    for (uint i = 0u; i < TM; ++i)
      for (uint j = 0u; j < TN; ++j) acc[i][j] += part[i][j];
    barrier();
  }
  for (uint i = 0u; i < TM; ++i)
    for (uint j = 0u; j < TN; ++j) {
      const uint r = row0 + tr + i * RT, c = tc + j * CT;
      if (r < pc.N && c < COLS && t0 + c < pc.T) y[(t0 + c) * pc.N + r] = acc[i][j];
    }
}
