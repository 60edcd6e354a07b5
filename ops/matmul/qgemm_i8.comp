// matmul / lm_head (vulkan:qgemm_i8): Y[T, N] = X[T, K] W[N, K]^T for prompt chunks on 4-way 8-bit integer dot
// products, for devices without matrix units. X arrives rounded to 8 bits per 32 values (quantize_x8.comp: values,
// block scales, scale * sum per 16); W is read as ggml blocks (Q4_K, Q5_K, Q6_K, Q8_0) and its slots (quant_slots.glsl:
// runs of 16 values with one multiplier and one offset each) are staged in shared memory as bytes. A run's share of
// an output is mul * xd * (q . xq) - off * xs: the integer dot product does the 16 multiply-adds in 4 instructions,
// and runs that share a multiplier and a block of X (K-quants' 32-value sub-blocks, Q8_0's blocks) take one float
// update for both.
//
// Tiles: a workgroup is SR x SC invocations, each a TM x TN block of outputs (rows tr + SR i, columns tc + SC j: a
// subgroup's invocations share their rows, so the staged X reads broadcast, and read neighbouring weight rows). It
// computes BR = TM SR rows of X by BN = TN SC weight rows; each K step stages S slots of every row of both. Staged
// rows are padded by one 16-byte unit, which spreads neighbouring rows' 16-byte reads over all banks. Workgroup g
// takes column tile g / nrow and row tile g % nrow (consecutive workgroups share one weight tile in L2).
#version 450
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;   // SR * SC
layout(constant_id = 1) const uint SR = 16;    // invocation rows
layout(constant_id = 2) const uint SC = 16;    // invocation columns
layout(constant_id = 3) const uint TYPE = 12;  // ggml type id: Q8_0 8, Q4_K 12, Q5_K 13, Q6_K 14
layout(constant_id = 4) const uint S = 2;      // slots per K step (the host keeps the row's slots a multiple)
#ifndef QI_TM
#define QI_TM 4
#endif
#ifndef QI_TN
#define QI_TN 8
#endif
const uint TM = QI_TM, TN = QI_TN, BR = TM * SR, BN = TN * SC;
#include "common.glsl"

layout(std430, binding = 0) restrict readonly buffer XQ { uvec4 xq4[]; };  // [T, K / 16]: 16 int8 values each
layout(std430, binding = 1) restrict readonly buffer XD { float xd[]; };   // [T, K / 32]
layout(std430, binding = 2) restrict readonly buffer XS { float xs[]; };   // [T, K / 16]
layout(std430, binding = 3) restrict readonly buffer W { uint wq[]; };      // raw rows (plus spare words)
layout(std430, binding = 3) restrict readonly buffer W4 { uvec4 wq4[]; };
layout(std430, binding = 4) restrict writeonly buffer Y { float y[]; };    // [T, N]
layout(push_constant) uniform Push { uint T, K, N, row_bytes, ncol; } pc;

#define HLQ_WORD(buf, i) wq[i]
#define HLQ_UVEC4(buf, i) wq4[i]
#include "quant_blocks.glsl"
#include "quant_slots.glsl"

// Runs per group (runs sharing a multiplier and X's block scale) and groups per slot.
const uint RPG = TYPE == HLQ_Q6_K ? 1u : 2u, G = HLQ_RUNS / RPG;
const uint RP = 4u * S + 1u;  // 16-byte units per staged row: 4 runs per slot (Q8_0 uses 2), one of padding

shared uvec4 xs_q[BR * RP], ws_q[BN * RP];  // the step's runs as bytes, row by row
shared vec4 xs_d[BR * S], xs_s[BR * S];     // per slot: X's block scale per group, scale * sum per group
shared vec4 ws_m[BN * S], ws_o[BN * S];     // per slot: the weight's multiplier and offset per group

void main() {
  const uint lid = gl_LocalInvocationID.x, slots = hlq_slots(pc.K);
  const uint nrow = (pc.T + BR - 1u) / BR, g = hl_group_index();
  if (g >= nrow * pc.ncol) return;
  const uint n0 = (g / nrow) * BN, p0 = (g % nrow) * BR;
  const uint tr = lid / SC, tc = lid % SC, K16 = pc.K / 16u;

  float acc[TM * TN];
  [[unroll]] for (uint i = 0u; i < TM * TN; ++i) acc[i] = 0.0;

  for (uint s0 = 0u; s0 < slots; s0 += S) {
    barrier();  // the previous step consumed
    // X: (row, slot, run) per item, the run's 16 values at the weight's K offsets; zeros past T.
    for (uint i = lid; i < BR * S * 4u; i += WG) {
      const uint r = i / (4u * S), ss = (i / 4u) % S, k = i % 4u, t = p0 + r;
      const uint at = t * K16 + hlq_slot_starts(s0 + ss)[k] / 16u;
      const bool ok = t < pc.T && k < HLQ_RUNS;
      xs_q[r * RP + 4u * ss + k] = ok ? xq4[at] : uvec4(0u);
      if (k % RPG == 0u) {  // the group's first run: its block scale and the group's scale * sum
        const uint gi = k / RPG;
        xs_d[r * S + ss][gi] = ok ? xd[at / 2u] : 0.0;
        xs_s[r * S + ss][gi] = ok ? (RPG == 2u ? xs[at] + xs[at + 1u] : xs[at]) : 0.0;
      }
    }
    // Weights: (row, slot) per item, neighbouring invocations neighbouring slots of a row; zeros past N.
    for (uint i = lid; i < BN * S; i += WG) {
      const uint c = i / S, ss = i % S, n = n0 + c;
      uvec4 q[4] = uvec4[4](uvec4(0u), uvec4(0u), uvec4(0u), uvec4(0u));
      vec4 mul = vec4(0.0), off = vec4(0.0);
      if (n < pc.N) hlq_slot(n * pc.row_bytes, s0 + ss, q, mul, off);
      [[unroll]] for (uint k = 0u; k < 4u; ++k) ws_q[c * RP + 4u * ss + k] = q[k];
      // Per group: the multiplier and offset of its first run (the same for every run of the group).
      ws_m[c * S + ss] = RPG == 2u ? vec4(mul.x, mul.z, 0.0, 0.0) : mul;
      ws_o[c * S + ss] = RPG == 2u ? vec4(off.x, off.z, 0.0, 0.0) : off;
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
          const uint c = tc + SC * j;
          const uvec4 b0 = ws_q[c * RP + 4u * ss + RPG * gi];
          const uvec4 b1 = RPG == 2u ? ws_q[c * RP + 4u * ss + RPG * gi + 1u] : uvec4(0u);
          const float m = ws_m[c * S + ss][gi], o = ws_o[c * S + ss][gi];
          [[unroll]] for (uint i = 0u; i < TM; ++i) {
            int d = hlq_dot16(b0, a0[i]);
            if (RPG == 2u) d += hlq_dot16(b1, a1[i]);
            acc[i * TN + j] = fma(m * ad[i], float(d), fma(-o, as_[i], acc[i * TN + j]));
          }
        }
      }
  }

  [[unroll]] for (uint i = 0u; i < TM; ++i) {
    const uint t = p0 + tr + SR * i;
    if (t >= pc.T) continue;
    [[unroll]] for (uint j = 0u; j < TN; ++j) {
      const uint col = n0 + tc + SC * j;
      if (col < pc.N) y[t * pc.N + col] = acc[i * TN + j];
    }
  }
}
