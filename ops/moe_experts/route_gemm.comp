// moe_experts (vulkan:route_pack), stage 4: the grouped expert GEMM over packed rows (f32).
// Workgroup g takes row tile ti = g / ncol of the compact tile list and output columns [n0, n0 + BN), the
// packed rows [p0, p1) of one expert (route_tile in route_gemm.glsl). Then a classic shared-memory SGEMM: BK-deep slices
// of the gathered A rows and of BN weight rows (both read along K, coalesced) are staged in shared memory,
// and each invocation accumulates TM x TN outputs (rows ty + i * BM/TM, columns tx + j * BN/TN: strided,
// so shared reads are conflict-free).
//   GATED == 1: A = x rows of the entries' tokens [T, H], weights gate and up [E*F, H]; writes
//               hmid[pos, f] = silu(gate . x) * (up . x) at the packed position pos.
//   GATED == 0: A = hmid [N, F] (packed order), weights down [E*H, F]; writes y_e[entry, h] by entry id
//               i = t * k + j, ready for the scatter (route_scatter.comp). The router weight is applied there.
// Weights are f32 words (QUANT == 0) or raw ggml block rows of types TYPE0 / TYPE1 (QUANT == 1, row r at byte
// r * rb0 / rb1): then each slice is BK = 128 values, whole 32-value units for every type (quant_blocks.glsl),
// decoded bit-exactly into the shared tile by one invocation per (weight row, unit).
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;  // (BM / TM) * (BN / TN)
layout(constant_id = 1) const uint BM = 16;   // packed rows per tile
layout(constant_id = 2) const uint BN = 64;   // output columns per tile
layout(constant_id = 3) const uint BK = 16;   // reduction depth per shared-memory stage
layout(constant_id = 4) const uint TM = 2;    // rows per invocation
layout(constant_id = 5) const uint TN = 4;    // columns per invocation
layout(constant_id = 6) const uint GATED = 1;
layout(constant_id = 7) const uint QUANT = 0;    // 1: ggml blocks (BK must be 128)
layout(constant_id = 8) const uint TYPE0 = 12;   // ggml type ids of w0 and w1 (QUANT == 1)
layout(constant_id = 9) const uint TYPE1 = 12;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer Rows { int rows[]; };     // [N] entry ids, packed order
layout(std430, binding = 2) readonly buffer Off { int offsets[]; };   // [E + 1]
layout(std430, binding = 3) readonly buffer Tiles { int tiles[]; };   // [E + 1]
layout(std430, binding = 4) readonly buffer W0 { uint w0[]; };        // gate or down (f32 bits or raw rows)
layout(std430, binding = 5) readonly buffer W1 { uint w1[]; };        // up (GATED == 0: unused)
layout(std430, binding = 6) writeonly buffer Res { float res[]; };
layout(push_constant) uniform Push {
  uint E, K;  // experts; reduction length (H, or F for down)
  uint N;     // output columns per expert (F, or H for down)
  uint k;     // slots per token
  uint ncol;  // ceil(N / BN)
  uint rb0, rb1;  // row bytes of w0, w1 (QUANT == 1)
} pc;

#define HLQ_WORD(buf, i) ((buf) == 0u ? w0[i] : w1[i])
#include "quant_blocks.glsl"

const uint CT = BN / TN, RT = BM / TM;  // invocations along columns, rows

shared float as[BK][BM];
shared float ws0[BK][BN];
shared float ws1[BK][BN];
shared uint arow[BM];  // offset of each tile row in a (ROUTE_NONE past the expert's rows)

#define ROUTE_STAGE(buf, c, kk, v) \
  if ((buf) == 0u) ws0[kk][c] = (v); \
  else ws1[kk][c] = (v)
#include "route_gemm.glsl"

void main() {
  uint e, p0, p1, n0;
  if (!route_tile(e, p0, p1, n0)) return;  // uniform per workgroup: past the packed tiles
  const uint lid = gl_LocalInvocationID.x, tx = lid % CT, ty = lid / CT;
  const uint wbase = e * pc.N;  // this expert's first weight row

  float acc0[TM * TN], acc1[TM * TN];
  for (uint i = 0u; i < TM * TN; ++i) acc0[i] = acc1[i] = 0.0;
  for (uint k0 = 0u; k0 < pc.K; k0 += BK) {
    barrier();  // arow written / the previous slice consumed
    for (uint i = lid; i < BM * BK; i += WG) {
      const uint r = i / BK, kk = i % BK, kg = k0 + kk;
      as[kk][r] = arow[r] != ROUTE_NONE && kg < pc.K ? a[arow[r] + kg] : 0.0;
    }
    if (QUANT == 0u) {
      for (uint i = lid; i < BN * BK; i += WG) {
        const uint c = i / BK, kk = i % BK, kg = k0 + kk, n = n0 + c;
        const bool ok = n < pc.N && kg < pc.K;
        const uint wi = (wbase + n) * pc.K + kg;
        ws0[kk][c] = ok ? uintBitsToFloat(w0[wi]) : 0.0;
        if (GATED == 1u) ws1[kk][c] = ok ? uintBitsToFloat(w1[wi]) : 0.0;
      }
    } else {  // units 4 * (k0 / 128) + 0..3 of each row
      for (uint i = lid; i < BN * 4u; i += WG) {
        const uint c = i / 4u, u = k0 / 32u + i % 4u, n = n0 + c;
        const bool ok = n < pc.N && u < pc.K / 32u;
        route_stage_unit(TYPE0, 0u, ok, (wbase + n) * pc.rb0, u, k0, c);
        if (GATED == 1u) route_stage_unit(TYPE1, 1u, ok, (wbase + n) * pc.rb1, u, k0, c);
      }
    }
    barrier();
    // Invocations whose rows all lie past the expert's rows skip the products (tiles of few-row experts).
    for (uint kk = 0u; kk < BK && p0 + ty < p1; ++kk) {
      float av[TM];
      for (uint i = 0u; i < TM; ++i) av[i] = as[kk][ty + i * RT];
      for (uint j = 0u; j < TN; ++j) {
        const float b0 = ws0[kk][tx + j * CT], b1 = GATED == 1u ? ws1[kk][tx + j * CT] : 0.0;
        for (uint i = 0u; i < TM; ++i) {
          acc0[i * TN + j] += av[i] * b0;
          if (GATED == 1u) acc1[i * TN + j] += av[i] * b1;
        }
      }
    }
  }

  for (uint i = 0u; i < TM; ++i) {
    const uint pos = p0 + ty + i * RT;
    if (pos >= p1) continue;
    const uint orow = (GATED == 1u ? pos : uint(rows[pos])) * pc.N;
    for (uint j = 0u; j < TN; ++j) {
      const uint n = n0 + tx + j * CT;
      if (n >= pc.N) continue;
      const float v = acc0[i * TN + j];
      res[orow + n] = GATED == 1u ? v / (1.0 + exp(-v)) * acc1[i * TN + j] : v;
    }
  }
}
