// Y = A W^T on 4-way 8-bit integer dot products, for devices without matrix units. A arrives rounded to 8 bits per 32
// values (quantize_x8.comp: values, block scales, scale * sum per 16); W is read as ggml blocks (Q4_K, Q5_K, Q6_K,
// Q8_0) and its slots (quant_slots.glsl: runs of 16 values with one multiplier and one offset each) are staged in
// shared memory as bytes. A run's share of an output is mul * xd * (q . xq) - off * xs: the integer dot product does
// the 16 multiply-adds in 4 instructions, and runs that share a multiplier and a block of A (K-quants' 32-value
// sub-blocks, Q8_0's blocks) take one float update for both. Shared by matmul / lm_head (vulkan:qgemm_i8, MODE 0:
// qgemm_i8.comp) and moe_experts (vulkan:route_pack_i8, MODE 1: qgemm_i8_gate.comp, gate and up with SwiGLU in the
// epilogue, and qgemm_i8_down.comp).
//
// Tiles: a workgroup is SR x SC invocations, each a TM x TN block of outputs (rows tr + SR i, columns tc + SC j: a
// subgroup's invocations share their rows, so the staged A reads broadcast, and read neighbouring weight rows). It
// computes BR = TM SR rows of A by BN = TN SC weight rows; each K step stages S slots of every row of both. Staged
// rows are padded by one 16-byte unit, which spreads neighbouring rows' 16-byte reads over all banks.
// MODE 0 (dense): workgroup g takes column tile g / nrow and row tile g % nrow (consecutive workgroups share one
// weight tile in L2). MODE 1: the compact tile list of route_offsets.comp (route_tile in route_gemm.glsl): expert e,
// packed rows [p0, p1), columns n0..; gate/up (QI_GATED) reads A by token (h written in packed order), down reads the
// packed rows of h and writes each entry's own row. Include after defining QI_TM, QI_TN and QI_GATED.
#ifndef HL_QGEMM_I8_GLSL
#define HL_QGEMM_I8_GLSL
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;   // SR * SC
layout(constant_id = 1) const uint SR = 16;    // invocation rows
layout(constant_id = 2) const uint SC = 16;    // invocation columns
layout(constant_id = 3) const uint TYPE = 12;  // ggml type id of the weights (gate and up alike): Q8_0 8, Q4_K 12, Q5_K 13, Q6_K 14
layout(constant_id = 4) const uint S = 2;      // slots per K step (the host keeps the row's slots a multiple)
layout(constant_id = 5) const uint MODE = 0;   // 0: dense rows; 1: route_pack tiles
const uint TM = QI_TM, TN = QI_TN, BR = TM * SR, BN = TN * SC, GATED = QI_GATED;
#define BM BR  // route_gemm.glsl's name for the rows per tile
#include "common.glsl"

layout(std430, binding = 0) restrict readonly buffer XQ { uvec4 xq4[]; };  // [rows, K / 16]: 16 int8 values each
layout(std430, binding = 1) restrict readonly buffer XD { float xd[]; };   // [rows, K / 32]
layout(std430, binding = 2) restrict readonly buffer XS { float xs[]; };   // [rows, K / 16]
layout(std430, binding = 3) restrict readonly buffer W0 { uint w0[]; };    // raw rows (plus spare words)
layout(std430, binding = 3) restrict readonly buffer W04 { uvec4 w04[]; };
layout(std430, binding = 4) restrict readonly buffer W1 { uint w1[]; };    // QI_GATED: up
layout(std430, binding = 4) restrict readonly buffer W14 { uvec4 w14[]; };
layout(std430, binding = 5) restrict writeonly buffer Y { float y[]; };
layout(std430, binding = 6) restrict readonly buffer Rows { int rows[]; };    // MODE 1: [T k] entry ids, packed order
layout(std430, binding = 7) restrict readonly buffer Off { int offsets[]; };  // MODE 1: [E + 1]
layout(std430, binding = 8) restrict readonly buffer Tiles { int tiles[]; };  // MODE 1: [E + 1]
layout(push_constant) uniform Push {
  uint E, K;      // MODE 1: experts; the reduction length
  uint N;         // output columns (weight rows per expert)
  uint k;         // MODE 1: slots per token
  uint ncol;      // ceil(N / BN)
  uint row_bytes; // of a weight row
  uint T;         // MODE 0: rows of A
} pc;

#define HLQ_WORD(buf, i) ((buf) == 0u ? w0[i] : w1[i])
#define HLQ_UVEC4(buf, i) ((buf) == 0u ? w04[i] : w14[i])
#include "quant_blocks.glsl"
#include "quant_slots.glsl"

// Runs per group (runs sharing a multiplier and A's block scale) and groups per slot.
const uint RPG = TYPE == HLQ_Q6_K ? 1u : 2u, G = HLQ_RUNS / RPG;
const uint RP = 4u * S + 1u;  // 16-byte units per staged row: 4 runs per slot (Q8_0 uses 2), one of padding

shared uvec4 xs_q[BR * RP], ws_q[(GATED + 1u) * BN * RP];  // the step's runs as bytes, row by row
shared vec4 xs_d[BR * S], xs_s[BR * S];                    // per slot: A's block scale per group, scale * sum per group
shared vec4 ws_m[(GATED + 1u) * BN * S], ws_o[(GATED + 1u) * BN * S];  // per slot: multiplier and offset per group
shared uint arow[BR];  // the A row of each tile row, ROUTE_NONE past the tile's rows
#include "route_gemm.glsl"

// Weight row c of the tile (b: 0, or 1 for up), slot s0 + ss staged; zeros past N.
void stage_weight(uint b, uint c, uint ss, uint s0, uint n0, uint wrow0) {
  uvec4 q[4] = uvec4[4](uvec4(0u), uvec4(0u), uvec4(0u), uvec4(0u));
  vec4 mul = vec4(0.0), off = vec4(0.0);
  const uint n = n0 + c;
  if (n < pc.N) {
    if (b == 0u) hlq_slot(0u, (wrow0 + n) * pc.row_bytes, s0 + ss, q, mul, off);
    else hlq_slot(1u, (wrow0 + n) * pc.row_bytes, s0 + ss, q, mul, off);
  }
  const uint r = b * BN + c;
  [[unroll]] for (uint k = 0u; k < 4u; ++k) ws_q[r * RP + 4u * ss + k] = q[k];
  // Per group: the multiplier and offset of its first run (the same for every run of the group).
  ws_m[r * S + ss] = RPG == 2u ? vec4(mul.x, mul.z, 0.0, 0.0) : mul;
  ws_o[r * S + ss] = RPG == 2u ? vec4(off.x, off.z, 0.0, 0.0) : off;
}

void main() {
  const uint lid = gl_LocalInvocationID.x, slots = hlq_slots(pc.K);
  uint p0, p1, n0, wrow0;  // tile rows [p0, p1) (A rows in MODE 0, packed entries in MODE 1), first column, expert row
  if (MODE == 0u) {
    const uint nrow = (pc.T + BR - 1u) / BR, g = hl_group_index();
    if (g >= nrow * pc.ncol) return;
    n0 = (g / nrow) * BN;
    p0 = (g % nrow) * BR;
    p1 = min(p0 + BR, pc.T);
    wrow0 = 0u;
    for (uint r = lid; r < BR; r += WG) arow[r] = p0 + r < p1 ? p0 + r : ROUTE_NONE;
  } else {
    uint e;
    if (!route_tile(e, p0, p1, n0)) return;  // uniform per workgroup: past the packed tiles
    wrow0 = e * pc.N;
    // route_tile wrote each row's offset in values of A; here rows are counted.
    for (uint r = lid; r < BR; r += WG) arow[r] = arow[r] == ROUTE_NONE ? ROUTE_NONE : arow[r] / pc.K;
  }
  const uint tr = lid / SC, tc = lid % SC, K16 = pc.K / 16u;

  float acc[TM * TN];
  [[unroll]] for (uint i = 0u; i < TM * TN; ++i) acc[i] = 0.0;
#if QI_GATED
  float accu[TM * TN];
  [[unroll]] for (uint i = 0u; i < TM * TN; ++i) accu[i] = 0.0;
#endif

  for (uint s0 = 0u; s0 < slots; s0 += S) {
    barrier();  // the previous step consumed (the first time: arow written)
    // A: (row, slot, run) per item, the run's 16 values at the weight's K offsets; zeros past the tile's rows.
    for (uint i = lid; i < BR * S * 4u; i += WG) {
      const uint r = i / (4u * S), ss = (i / 4u) % S, k = i % 4u, t = arow[r];
      const bool ok = t != ROUTE_NONE && k < HLQ_RUNS;
      const uint at = (ok ? t : 0u) * K16 + hlq_slot_starts(s0 + ss)[k] / 16u;
      xs_q[r * RP + 4u * ss + k] = ok ? xq4[at] : uvec4(0u);
      if (k % RPG == 0u) {  // the group's first run: its block scale and the group's scale * sum
        const uint gi = k / RPG;
        xs_d[r * S + ss][gi] = ok ? xd[at / 2u] : 0.0;
        xs_s[r * S + ss][gi] = ok ? (RPG == 2u ? xs[at] + xs[at + 1u] : xs[at]) : 0.0;
      }
    }
    // Weights: (row, slot) per item, neighbouring invocations neighbouring slots of a row.
    for (uint i = lid; i < BN * S; i += WG) {
      stage_weight(0u, i / S, i % S, s0, n0, wrow0);
      if (GATED == 1u) stage_weight(1u, i / S, i % S, s0, n0, wrow0);
    }
    barrier();  // the step is staged

    [[unroll]] for (uint ss = 0u; ss < S; ++ss)
      [[unroll]] for (uint gi = 0u; gi < G; ++gi) {
        uvec4 a0[TM], a1[TM];
        float ad[TM], as_[TM];
        [[unroll]] for (uint i = 0u; i < TM; ++i) {
          const uint r = tr + SR * i;
          a0[i] = xs_q[r * RP + 4u * ss + RPG * gi];
          if (RPG == 2u) a1[i] = xs_q[r * RP + 4u * ss + RPG * gi + 1u];
          ad[i] = xs_d[r * S + ss][gi];
          as_[i] = xs_s[r * S + ss][gi];
        }
        [[unroll]] for (uint j = 0u; j < TN; ++j) {
          [[unroll]] for (uint b = 0u; b <= GATED; ++b) {
            const uint c = b * BN + tc + SC * j;
            const uvec4 b0 = ws_q[c * RP + 4u * ss + RPG * gi];
            const uvec4 b1 = RPG == 2u ? ws_q[c * RP + 4u * ss + RPG * gi + 1u] : uvec4(0u);
            const float m = ws_m[c * S + ss][gi], o = ws_o[c * S + ss][gi];
            [[unroll]] for (uint i = 0u; i < TM; ++i) {
              int d = hlq_dot16(b0, a0[i]);
              if (RPG == 2u) d += hlq_dot16(b1, a1[i]);
#if QI_GATED
              if (b == 1u) {
                accu[i * TN + j] = fma(m * ad[i], hl_small_int_float(d), fma(-o, as_[i], accu[i * TN + j]));
                continue;
              }
#endif
              acc[i * TN + j] = fma(m * ad[i], hl_small_int_float(d), fma(-o, as_[i], acc[i * TN + j]));
            }
          }
        }
      }
  }

  // Each invocation its own outputs, rows inside [p0, p1), columns < N (neighbouring invocations, neighbouring columns).
  [[unroll]] for (uint i = 0u; i < TM; ++i) {
    const uint pos = p0 + tr + SR * i;
    if (pos >= p1) continue;
    // Dense and gate/up: row pos (route_pack: h in packed order); down: the entry's own row.
    const uint orow = MODE == 1u && GATED == 0u ? uint(rows[pos]) : pos;
    [[unroll]] for (uint j = 0u; j < TN; ++j) {
      const uint col = n0 + tc + SC * j;
      if (col >= pc.N) continue;
      float v = acc[i * TN + j];
#if QI_GATED
      v = v / (1.0 + exp(-v)) * accu[i * TN + j];
#endif
      y[orow * pc.N + col] = v;
    }
  }
}

#endif
