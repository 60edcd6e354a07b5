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
// 1: the next step's A runs and Q4_K / Q5_K weight words (raw, HlqSlotRaw) loaded into registers before this step's
// products and staged after them (their latency behind the products), where they fit QI_AREG / QI_WREG items per
// invocation; 0: each step loads and stages in turn.
layout(constant_id = 6) const uint PREFETCH = 0;
layout(constant_id = 7) const uint SKIP_ROWS = 0;  // 1: products of rows past the tile's end skipped (0: computed on zeros)
#ifndef QI_AREG
#define QI_AREG 4
#endif
#ifndef QI_WREG
#define QI_WREG 2
#endif
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

// This invocation's outputs (module scope: products() adds to them).
float acc[TM * TN];
#if QI_GATED
float accu[TM * TN];
#endif

const uint AV = BR * S * 4u, WV = BN * S;  // A items (row, slot, run) and weight items (row, slot) of a step

// A item i of the step at slot s0: the run's 16 values at the weight's K offsets and, for a group's first run, the
// block scale and the group's scale * sum (zeros past the tile's rows and for i past the step).
void a_load(uint i, uint s0, out uvec4 q, out vec2 ds) {
  const uint r = min(i / (4u * S), BR - 1u), ss = (i / 4u) % S, k = i % 4u, t = i < AV ? arow[r] : ROUTE_NONE;
  const bool ok = t != ROUTE_NONE && k < HLQ_RUNS;
  const uint at = (ok ? t : 0u) * (pc.K / 16u) + hlq_slot_starts(s0 + ss)[k] / 16u;
  q = ok ? xq4[at] : uvec4(0u);
  ds = ok && k % RPG == 0u ? vec2(xd[at / 2u], RPG == 2u ? xs[at] + xs[at + 1u] : xs[at]) : vec2(0.0);
}
void a_store(uint i, uvec4 q, vec2 ds) {
  if (i >= AV) return;
  const uint r = i / (4u * S), ss = (i / 4u) % S, k = i % 4u;
  xs_q[r * RP + 4u * ss + k] = q;
  if (k % RPG == 0u) {
    xs_d[r * S + ss][k / RPG] = ds.x;
    xs_s[r * S + ss][k / RPG] = ds.y;
  }
}

// Weight item i (tile row i / S, slot s0 + i % S; b: 0, or 1 for up) decoded into shared memory, zeros past N.
void w_store(uint b, uint i, uvec4 q[4], vec4 mul, vec4 off) {
  if (i >= WV) return;
  const uint r = b * BN + i / S, ss = i % S;
  [[unroll]] for (uint k = 0u; k < 4u; ++k) ws_q[r * RP + 4u * ss + k] = q[k];
  // Per group: the multiplier and offset of its first run (the same for every run of the group).
  ws_m[r * S + ss] = RPG == 2u ? vec4(mul.x, mul.z, 0.0, 0.0) : mul;
  ws_o[r * S + ss] = RPG == 2u ? vec4(off.x, off.z, 0.0, 0.0) : off;
}
void w_stage(uint b, uint i, uint s0, uint n0, uint wrow0) {
  uvec4 q[4] = uvec4[4](uvec4(0u), uvec4(0u), uvec4(0u), uvec4(0u));
  vec4 mul = vec4(0.0), off = vec4(0.0);
  const uint n = n0 + i / S, row = (wrow0 + n) * pc.row_bytes, s = s0 + i % S;
  if (i < WV && n < pc.N) {
    if (b == 0u) hlq_slot(0u, row, s, q, mul, off);
    else hlq_slot(1u, row, s, q, mul, off);
  }
  w_store(b, i, q, mul, off);
}
// The same in two halves (PREFETCH, Q4_K / Q5_K): the raw words (zeros past N), then their decode.
void w_raw(uint b, uint i, uint s0, uint n0, uint wrow0, out HlqSlotRaw r) {
  r.head = r.a = r.c = r.h0 = r.h1 = uvec4(0u);
  const uint n = n0 + i / S, row = (wrow0 + n) * pc.row_bytes, s = s0 + i % S;
  if (i >= WV || n >= pc.N) return;
  if (b == 0u) hlq_slot_raw(0u, row, s, r);
  else hlq_slot_raw(1u, row, s, r);
}
void w_unpack(uint b, uint i, uint s0, HlqSlotRaw r) {
  uvec4 q[4];
  vec4 mul, off;
  hlq_slot_unpack(r, s0 + i % S, q, mul, off);  // zero words decode to zero multipliers, offsets and values
  w_store(b, i, q, mul, off);
}

// The step's products of group gi of slot ss for this invocation's rows tr + SR i (i < live) and columns tc + SC j.
void products(uint ss, uint gi, uint tr, uint tc, uint live) {
  uvec4 a0[TM], a1[TM];
  float ad[TM], as_[TM];
  [[unroll]] for (uint i = 0u; i < TM; ++i) {
    if (i >= live) continue;
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
        if (i >= live) continue;
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
  const uint tr = lid / SC, tc = lid % SC;

  [[unroll]] for (uint i = 0u; i < TM * TN; ++i) acc[i] = 0.0;
#if QI_GATED
  [[unroll]] for (uint i = 0u; i < TM * TN; ++i) accu[i] = 0.0;
#endif
  // This invocation's rows inside the tile (rows tr + SR i, i < live): a route-packed tile is often half full (about 16
  // tokens per expert in 32-row tiles), and the products of its empty rows are skipped. Uniform within a subgroup
  // where SC is at least its size.
  const uint nv = p1 - p0, live = SKIP_ROWS == 0u ? TM : nv > tr ? min(TM, (nv - tr + SR - 1u) / SR) : 0u;

  // Next step's A items and weight words in registers (see PREFETCH). (Plain locals: glslang mis-emits these
  // specialization-constant expressions as constants; the driver folds them.)
  uint pf = PREFETCH;
  bool PFA = pf != 0u && AV <= uint(QI_AREG) * WG;
  bool PFW = pf != 0u && WV <= uint(QI_WREG) * WG && (TYPE == HLQ_Q4_K || TYPE == HLQ_Q5_K);
  uvec4 ra[QI_AREG];
  vec2 rd[QI_AREG];
  HlqSlotRaw rw[QI_WREG * (QI_GATED + 1)];
  barrier();  // arow written
  if (PFA) [[unroll]] for (uint q = 0u; q < QI_AREG; ++q) a_load(lid + q * WG, 0u, ra[q], rd[q]);
  if (PFW)
    [[unroll]] for (uint q = 0u; q < QI_WREG; ++q)
      [[unroll]] for (uint b = 0u; b <= GATED; ++b) w_raw(b, lid + q * WG, 0u, n0, wrow0, rw[b * QI_WREG + q]);
  for (uint s0 = 0u; s0 < slots; s0 += S) {
    barrier();  // the previous step consumed
    if (PFA) {
      [[unroll]] for (uint q = 0u; q < QI_AREG; ++q) a_store(lid + q * WG, ra[q], rd[q]);
    } else {
      for (uint i = lid; i < AV; i += WG) {
        uvec4 q;
        vec2 ds;
        a_load(i, s0, q, ds);
        a_store(i, q, ds);
      }
    }
    if (PFW) {
      [[unroll]] for (uint q = 0u; q < QI_WREG; ++q)
        [[unroll]] for (uint b = 0u; b <= GATED; ++b) w_unpack(b, lid + q * WG, s0, rw[b * QI_WREG + q]);
    } else {
      // Neighbouring invocations, neighbouring slots of a row.
      for (uint i = lid; i < WV; i += WG) {
        w_stage(0u, i, s0, n0, wrow0);
        if (GATED == 1u) w_stage(1u, i, s0, n0, wrow0);
      }
    }
    barrier();  // the step is staged
    if (s0 + S < slots) {
      if (PFA) [[unroll]] for (uint q = 0u; q < QI_AREG; ++q) a_load(lid + q * WG, s0 + S, ra[q], rd[q]);
      if (PFW)
        [[unroll]] for (uint q = 0u; q < QI_WREG; ++q)
          [[unroll]] for (uint b = 0u; b <= GATED; ++b) w_raw(b, lid + q * WG, s0 + S, n0, wrow0, rw[b * QI_WREG + q]);
    }

    // Constant live on the full tiles' path: its row checks fold away.
    [[unroll]] for (uint ss = 0u; ss < S; ++ss)
      [[unroll]] for (uint gi = 0u; gi < G; ++gi) {
        if (live == TM) products(ss, gi, tr, tc, TM);
        else products(ss, gi, tr, tc, live);
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
