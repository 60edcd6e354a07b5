// Y = A W^T on cooperative matrices, W read as ggml blocks (or f32/f16 rows) and decoded into shared f16 tiles
// inside the K loop (never a dequantized copy of the weight in memory); A rows are f32, rounded to f16 as they
// are staged; f32 accumulation. Shared by matmul / lm_head (vulkan:qgemm_coopmat: A = the prompt chunk's rows)
// and moe_experts (vulkan:route_pack_coopmat: A = the rows route_pack packed for one expert).
//
// Tiles: a workgroup computes BR x BN of Y: BR rows of A (tokens, or one expert's packed entries) by BN weight
// rows (output columns), with SR x SC subgroups, each a QG_MR x QG_MC block of 16 x 16 accumulators (per weight;
// GATED: gate and up, the SwiGLU's two products, h = silu(gate) * up in the epilogue). QG_MR and QG_MC are
// compile-time (the accumulators stay in registers: every loop over them unrolls, every index is a constant); SR
// and SC are specialization constants. The K loop stages QG_U (a specialization constant) 32-value units of every A
// row and weight row per step, each in the unit's own value order (a ggml unit is two runs of 16 values, apart in
// K-quants): the weight unit as decoded, the A row gathered at the same K offsets, so every block type streams whole
// units; gate and up must share that order (the host checks). The next step's A values and Q4_K units are loaded
// into registers before this step's products, and staged after them. Shared tiles are f16vec4 arrays, written 8
// bytes at a time, rows padded by 8 halves (QG_SCALAR: vec4, padded by 4 values).
// The epilogue goes through a 16 x 16 f32 scratch per subgroup: only rows inside the tile's range and columns
// below N are written.
//
// Work split: MODE 0 (dense): workgroup g takes column tile g / nrow and row tile g % nrow (consecutive
// workgroups share one weight tile in L2), and with KS > 1 splits of K (split-K: few tiles, a long K), K range
// (g / tiles) of KS, its partial sums written to slice (g / tiles) of KS [T, N] slices the host adds up. KS is a
// specialization constant: at 1 (unsplit, and MODE 1) the split's arithmetic folds away (as a push constant it
// cost the narrowed dense tiles and the routed kernels registers and time).
// MODE 0 with GATED and PAIR (qgemm_dense_pair): two weights of one input, both products written as they are.
// MODE 1 (route_pack, GATED 1: gate/up; GATED 0: down): the compact
// tile list of route_offsets.comp (route_tile in route_gemm.glsl): expert e, packed rows [p0, p1), columns n0..;
// gate/up with PAIR and KS > 1 (split_k): workgroup g takes K part g % KS of tile g / KS, both products' partial
// sums written to its slice ([KS, rows, N] of gate's, then of up's; route_swiglu.comp adds them and applies SwiGLU).
//
// The host sizes the workgroup as SR SC subgroups of the device's largest subgroup size with full subgroups, so
// every subgroup block has its subgroup whatever size the device runs (a spare subgroup only stages and writes);
// every branch around a cooperative-matrix operation is subgroup-uniform. Include after defining QG_MR, QG_MC and
// QG_GATED_ACC.
//
// With QG_SCALAR defined (qgemm*_sc.comp, for devices without cooperative matrices): the same staging, work split
// and epilogue, the products on scalar f32 FMAs. The workgroup is SR x SC invocations, each a QG_TM x QG_TN block of
// outputs (rows tr + SR i, columns tc + SC j: a subgroup's invocations share their rows, so A reads broadcast, and
// read neighbouring weight rows). Both tiles are staged in f32 (no conversion in the products): A exact, the weights
// as decoded (K-quants through the same f16 arithmetic as above; f32, f16 and q8_0 rows exact). Rows are padded by 4
// values, which spreads a subgroup's 16-byte reads of neighbouring rows over all banks. With QG_F16_WEIGHTS the
// weight tiles stay f16 (rows padded by 8 halves), half the shared memory, each value converted as it is read, the
// products 8 values at a time: what the routed kernels take (their gated tiles are two weights).
#ifndef HL_QGEMM_CM_GLSL
#define HL_QGEMM_CM_GLSL
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;   // SR * SC * the largest subgroup size
layout(constant_id = 1) const uint SR = 2;     // subgroup rows
layout(constant_id = 2) const uint SC = 2;     // subgroup columns
layout(constant_id = 3) const uint GATED = 0;  // 1: two weights (gate, up), y = silu(A gate^T) * (A up^T)
layout(constant_id = 4) const uint MODE = 0;   // 0: dense rows; 1: route_pack tiles
layout(constant_id = 5) const uint TYPE0 = 12; // ggml type ids of w0 and w1 (F32 0, F16 1, Q8_0 8, Q4_K 12, ...)
layout(constant_id = 6) const uint TYPE1 = 12;
layout(constant_id = 8) const uint QG_U = 2;   // 32-value units of K per step (the host keeps K a multiple)
layout(constant_id = 9) const uint KS = 1;     // splits of K (1: none; MODE 1: gated with PAIR only)
// Diagnosis only (tunable <prefix>diag, results wrong): 1 stages the weights once, 2 stages A once, 4 skips the
// products, 8 (MODE 1) reads expert 0's weights for every expert (a working set the L2 holds: memory-side cost
// against the SM side), 16 (prefetched Q4_K runs) reads each subgroup's runs from a few neighbouring cache lines
// instead of one line per weight row, 32 declares (DIAG >> 16) KB more shared memory per workgroup (the kernel otherwise
// as built: what a larger shared footprint alone costs), 64 (prefetch of A) loads A's values for the first step only
// and 128 (prefetch of Q4_K units) the weights' (their global traffic and latency left out, the rest as built), 256
// stores the decoded Q4_K values at lane-contiguous addresses (no bank conflicts; the values misplaced), 512 (MODE 1)
// runs only the first (DIAG >> 16) workgroups of the grid (the rest return at once: time against that count shows
// whether the grid runs in whole waves of resident workgroups); what a kernel engineer times to see which part bounds
// the K loop.
layout(constant_id = 7) const uint DIAG = 0;
// Prefetch into registers (below) of A (bit 0), of the Q4_K weight units (bit 1) and of other K-quant units (bit 2: Q5_K,
// Q6_K, one unit per step, not gated; their raw words, HlqRaw), where the slots hold a step: each slot is live across
// the step's products, so it costs residency; 0 loads a step when it is staged. Bit 3 issues them before the staging
// barrier instead of after it (EARLY, below).
layout(constant_id = 10) const uint PREFETCH = 3;
// GATED 1 (MODE 0, or MODE 1 with split K): 1 writes both products as they are (no SwiGLU): w0's at res[slice + row N +
// col], w1's KS T N further on (MODE 1: T the packed rows), each split's partial sums in its own slice (the caller's
// pass adds them up and applies what follows).
layout(constant_id = 11) const uint PAIR = 0;
// MODE 1: 1 keeps h (gate/up's output, down's A) in f16: gate/up writes it as f16 pairs, down reads them as its A (the
// values down's staging rounds to f16 anyway: half the bytes written and read, and no conversion at staging).
layout(constant_id = 12) const uint HALF_H = 0;
// 1: w0 and w1 are K-quants in chunk columns of N rows (WeightStore::device_chunk_columns; MODE 1: an expert's rows, one
// group): each 16-byte chunk of a block, then the same chunk of the next row, so a subgroup's loads of neighbouring
// weight rows' units and block heads lie in neighbouring 16 bytes instead of one cache line per row. pc.rb0, rb1 unused.
layout(constant_id = 13) const uint COLS = 0;
#ifdef QG_SCALAR
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
const uint BR = QG_TM * SR, BN = QG_TN * SC;
#define QG_AT vec4      // a staged A element: f32
#ifdef QG_F16_WEIGHTS
#define QG_WT f16vec4   // a weight element: f16 (half the shared memory), converted as it is read
const uint QG_PAD = 2u;
#else
#define QG_WT vec4      // f32
const uint QG_PAD = 1u;  // vec4 of padding per staged row
#endif
#else
const uint BR = 16u * QG_MR * SR, BN = 16u * QG_MC * SC;
#define QG_AT f16vec4   // f16, as the matrices take them
#define QG_WT f16vec4
const uint QG_PAD = 2u;  // 16-byte aligned rows
#endif
#define BM BR  // route_gemm.glsl's name for the rows per tile
#include "common.glsl"
#ifndef QG_SCALAR
#include "coopmat.glsl"
#endif

// restrict: the output is never one of the inputs (inputs may share a buffer: they are only read).
layout(std430, binding = 0) restrict readonly buffer A { vec4 a4[]; };        // [rows, K] f32
layout(std430, binding = 1) restrict readonly buffer Rows { int rows[]; };     // MODE 1: [T k] entry ids, packed order
layout(std430, binding = 2) restrict readonly buffer Off { int offsets[]; };   // MODE 1: [E + 1]
layout(std430, binding = 3) restrict readonly buffer Tiles { int tiles[]; };   // MODE 1: [E + 1]
layout(std430, binding = 4) restrict readonly buffer W0 { uint w0[]; };        // raw rows (WeightStore::device_raw)
layout(std430, binding = 5) restrict readonly buffer W1 { uint w1[]; };        // GATED: up
layout(std430, binding = 6) restrict writeonly buffer Res { float res[]; };
layout(std430, binding = 7) restrict readonly buffer W04 { uvec4 w04[]; };     // w0 as 16-byte units
layout(std430, binding = 8) restrict readonly buffer W14 { uvec4 w14[]; };     // w1 as 16-byte units
layout(std430, binding = 0) restrict readonly buffer AH { uvec2 ah[]; };       // HALF_H, down: A as f16, 4 per uvec2
layout(std430, binding = 6) restrict writeonly buffer ResU { uint resu[]; };   // HALF_H, gate/up: h as f16 pairs
layout(push_constant) uniform Push {
  uint E, K;      // MODE 1: experts; the reduction length
  uint N;         // output columns (weight rows per expert)
  uint k;         // MODE 1: slots per token
  uint ncol;      // ceil(N / BN)
  uint rb0, rb1;  // row bytes of w0, w1
  uint T;         // MODE 0: rows of A
} pc;

#define HLQ_WORD(buf, i) ((buf) == 0u ? w0[i] : w1[i])
#define HLQ_UVEC4(buf, i) ((buf) == 0u ? w04[i] : w14[i])
#include "quant_blocks.glsl"

// Register slots per invocation for the next step's A values (vec4, QG_AREG) and weight runs (QG_WREG): the including
// shader may raise them (the emulated kernels do, so that lavapipe's narrow subgroups take the same path). A weight
// run is one weight row's units of the step (all in one ggml block: QG_U divides 8): its block head once and up to
// QG_UMAX 16-byte unit loads, contiguous in the block.
#ifndef QG_AREG
#define QG_AREG 8
#endif
#ifndef QG_WREG
#define QG_WREG 2
#endif
// The weight slots decoded with literal indices (a loop the SPIR-V optimiser leaves rolled indexes them
// dynamically, which keeps them in memory).
#define QG_W_DECODE(q)                                                                  \
  {                                                                                     \
    const uint i = lid + (q) * WG, b = i / BN, c = i % BN;                              \
    if ((q) < WSLOTS && i < WR)                                                         \
      [[unroll]] for (uint uu = 0u; uu < QG_UMAX; ++uu)                                 \
        if (uu < QG_U) q4k_decode(b, u0 + uu, rh[q], rq[q][uu], c * KP + 8u * uu);      \
  }
#if QG_WREG == 1
#define QG_W_DECODES QG_W_DECODE(0u)
#elif QG_WREG == 2
#define QG_W_DECODES QG_W_DECODE(0u) QG_W_DECODE(1u)
#elif QG_WREG == 4
#define QG_W_DECODES QG_W_DECODE(0u) QG_W_DECODE(1u) QG_W_DECODE(2u) QG_W_DECODE(3u)
#elif QG_WREG == 8
#define QG_W_DECODES QG_W_DECODE(0u) QG_W_DECODE(1u) QG_W_DECODE(2u) QG_W_DECODE(3u) \
                     QG_W_DECODE(4u) QG_W_DECODE(5u) QG_W_DECODE(6u) QG_W_DECODE(7u)
#elif QG_WREG == 16
#define QG_W_DECODES QG_W_DECODE(0u) QG_W_DECODE(1u) QG_W_DECODE(2u) QG_W_DECODE(3u) \
                     QG_W_DECODE(4u) QG_W_DECODE(5u) QG_W_DECODE(6u) QG_W_DECODE(7u) \
                     QG_W_DECODE(8u) QG_W_DECODE(9u) QG_W_DECODE(10u) QG_W_DECODE(11u) \
                     QG_W_DECODE(12u) QG_W_DECODE(13u) QG_W_DECODE(14u) QG_W_DECODE(15u)
#else
#error QG_WREG must be 1, 2, 4, 8 or 16
#endif

// The raw-word slots (prefetch bit 2) decoded and staged, with literal indices as above.
#define QG_R_DECODE(q)                                                                  \
  {                                                                                     \
    const uint i = lid + (q) * WG, c = i % BN;                                          \
    if ((q) < WSLOTS && i < WR)                                                         \
      stage_raw(rr[q], COLS == 1u ? 0u : (wrow0 + n0 + c) * pc.rb0, COLS == 1u ? u0 % 8u : u0, c * KP); \
  }
#if QG_WREG == 1
#define QG_R_DECODES QG_R_DECODE(0u)
#elif QG_WREG == 2
#define QG_R_DECODES QG_R_DECODE(0u) QG_R_DECODE(1u)
#elif QG_WREG == 4
#define QG_R_DECODES QG_R_DECODE(0u) QG_R_DECODE(1u) QG_R_DECODE(2u) QG_R_DECODE(3u)
#elif QG_WREG == 8
#define QG_R_DECODES QG_R_DECODE(0u) QG_R_DECODE(1u) QG_R_DECODE(2u) QG_R_DECODE(3u) \
                     QG_R_DECODE(4u) QG_R_DECODE(5u) QG_R_DECODE(6u) QG_R_DECODE(7u)
#else
#define QG_R_DECODES QG_R_DECODE(0u) QG_R_DECODE(1u) QG_R_DECODE(2u) QG_R_DECODE(3u) \
                     QG_R_DECODE(4u) QG_R_DECODE(5u) QG_R_DECODE(6u) QG_R_DECODE(7u) \
                     QG_R_DECODE(8u) QG_R_DECODE(9u) QG_R_DECODE(10u) QG_R_DECODE(11u) \
                     QG_R_DECODE(12u) QG_R_DECODE(13u) QG_R_DECODE(14u) QG_R_DECODE(15u)
#endif

const uint KU = 32u * QG_U;      // values per K step: QG_U units
const uint WR = BN * (GATED + 1u);  // weight runs per step (each a row's units of one weight)
const uint KP = KU / 4u + QG_PAD;  // vectors per staged row: the step's values and the padding
#ifndef QG_SCALAR
const uint NACC = QG_MR * QG_MC;
#endif

shared QG_AT as[BR * KP];
shared QG_WT ws0[BN * KP];
shared QG_WT ws1[GATED == 1u ? BN * KP : 1u];
#ifndef QG_SCALAR
shared float scratch[SR * SC * 256u * (GATED + 1u)];
#endif
shared uint arow[BR];  // offset (in vec4) of each tile row in A, ROUTE_NONE past the tile's rows
shared uvec4 diag_pad[(DIAG & 32u) != 0u ? 64u * (DIAG >> 16u) + 1u : 1u];  // DIAG 32: written and read once
#include "route_gemm.glsl"

#ifdef HL_CM_EMULATE
const uint HL_CM_ID_as = 0u, HL_CM_ID_ws0 = 1u, HL_CM_ID_ws1 = 2u;
float hl_cm_read(uint id, uint i) {
  const f16vec4 v = id == 0u ? as[i / 4u] : id == 1u ? ws0[i / 4u] : ws1[i / 4u];
  return float(v[i % 4u]);
}
#endif

#define QG_STORE_DIAG ((DIAG & 256u) != 0u)
#define QG_PERM  // quads staged as values 0, 2, 1, 3 (qgemm_stage.glsl), A and weights alike
#include "qgemm_stage.glsl"

// A value i of the step at unit u0 (vec4 j of tile row r: the step's units' runs at the weight unit's K offsets);
// zeros past the tile's rows and for i past the step.
vec4 a_load(uint i, uint u0) {
  const uint r = i / (8u * QG_U), j = i % (8u * QG_U), uu = j / 8u;
  const uvec2 runs = hlq_unit_runs(TYPE0, u0 + uu) / 4u;
  const uint at = ((j % 8u) < 4u ? runs.x : runs.y) + j % 4u;
  return i < BR * 8u * QG_U && arow[min(r, BR - 1u)] != ROUTE_NONE ? a4[arow[r] + at] : vec4(0.0);
}
uint a_slot(uint i) { return (i / (8u * QG_U)) * KP + i % (8u * QG_U); }
// The same from A in f16 (HALF_H, down): its four halves as raw bits, staged without a conversion (a_stage_h).
uvec2 a_load_h(uint i, uint u0) {
  const uint r = i / (8u * QG_U), j = i % (8u * QG_U), uu = j / 8u;
  const uvec2 runs = hlq_unit_runs(TYPE0, u0 + uu) / 4u;
  const uint at = ((j % 8u) < 4u ? runs.x : runs.y) + j % 4u;
  return i < BR * 8u * QG_U && arow[min(r, BR - 1u)] != ROUTE_NONE ? ah[arow[r] + at] : uvec2(0u);
}
QG_AT a_stage_h(uvec2 w) { return QG_AT(QG_PERM4(f16vec4(unpackFloat2x16(w.x), unpackFloat2x16(w.y)))); }

// COLS: the byte of chunk 0 of block blk of weight row n of the group (an expert: N rows) whose first row is wrow0;
// the group's chunks are 16 N bytes apart.
uint col_blk(uint type, uint wrow0, uint n, uint blk) {
  return (((wrow0 / pc.N) * (pc.K / 256u) + blk) * hlq_chunks_per_block(type) * pc.N + n) * 16u;
}

// Weight run i of the step at units [u0, u0 + QG_U): weight b = i / BN (GATED: 0 gate, 1 up), tile row c = i % BN
// (neighbouring invocations, neighbouring rows). Zero heads past N.
void w_load(uint i, uint u0, uint n0, uint wrow0, out uvec4 head, out uvec4 qs[QG_UMAX]) {
  const uint b = i / BN, n = n0 + i % BN, rb = b == 0u ? pc.rb0 : pc.rb1;
  if (COLS == 1u) {
    q4k_run_load_cols(b, col_blk(HLQ_Q4_K, wrow0, n, u0 / 8u), 16u * pc.N, i < WR && n < pc.N, u0, head, qs);
    return;
  }
  // DIAG 16: neighbouring runs 16 bytes apart inside the tile's first rows (a subgroup's loads on a few cache lines,
  // not one line per run): what the loads' scatter over weight rows costs.
  const uint row = (DIAG & 16u) != 0u ? (wrow0 + n0) * rb + (i % BN) * 16u : (wrow0 + n) * rb;
  q4k_run_load(b, row, i < WR && n < pc.N, u0, head, qs);
}

// Raw-word slot i (prefetch bit 2; not gated, one unit per step): unit u0 of tile row c = i % BN, zeros past N.
void r_load(uint i, uint u0, uint n0, uint wrow0, out HlqRaw r) {
  const uint n = n0 + i % BN;
  r.a = r.b = r.c = uvec4(0u);
  r.e = uvec2(0u);
  if (i < WR && n < pc.N) {
    if (COLS == 1u) hlq_unit_raw_columns(TYPE0, 0u, col_blk(TYPE0, wrow0, n, u0 / 8u), 16u * pc.N, u0 % 8u, r);
    else hlq_unit_raw(TYPE0, 0u, (wrow0 + n) * pc.rb0, u0, r);
  }
}

#ifdef QG_SCALAR
// s + the dot product of a and b, in k order.
float qg_dot4(vec4 a, vec4 b, float s) {
  [[unroll]] for (uint k = 0u; k < 4u; ++k) s = fma(a[k], b[k], s);
  return s;
}
// s + the dot product of (a0, a1) and (b0, b1), in k order.
float qg_dot8(vec4 a0, vec4 a1, vec4 b0, vec4 b1, float s) { return qg_dot4(a1, b1, qg_dot4(a0, b0, s)); }
#else
// One 16 x 16 block of the result (rows r.. of the tile, columns n..; u: up's block when GATED) through subgroup
// s's scratch: rows inside [p0, p1), columns below N.
void epilogue_block(hl_cm_acc a, hl_cm_acc u, uint s, uint p0, uint p1, uint n, uint r, uint slice) {
  const uint sb = s * 256u * (GATED + 1u);
  HL_CM_STORE(scratch, sb, a, HL_CM_ROW_MAJOR, 16u);
  if (GATED == 1u) HL_CM_STORE(scratch, sb + 256u, u, HL_CM_ROW_MAJOR, 16u);
  subgroupMemoryBarrierShared();
  subgroupBarrier();
  if (GATED == 1u && MODE == 1u && HALF_H == 1u) {  // h as f16 pairs (N even: a pair never crosses it)
    for (uint x = gl_SubgroupInvocationID; x < 128u; x += gl_SubgroupSize) {
      const uint e = 2u * x, pos = p0 + r + e / 16u, col = n + e % 16u;
      if (pos >= p1 || col >= pc.N) continue;
      vec2 y;
      [[unroll]] for (uint t = 0u; t < 2u; ++t) {
        const float g = scratch[sb + e + t];
        y[t] = g / (1.0 + exp(-g)) * scratch[sb + 256u + e + t];
      }
      resu[(pos * pc.N + col) / 2u] = packHalf2x16(y);
    }
  } else
  for (uint e = gl_SubgroupInvocationID; e < 256u; e += gl_SubgroupSize) {
    const uint pos = p0 + r + e / 16u, col = n + e % 16u;
    if (pos >= p1 || col >= pc.N) continue;
    float y = scratch[sb + e];
    if (GATED == 1u && PAIR == 1u) {  // both products, raw
      res[slice + pos * pc.N + col] = y;
      res[KS * pc.T * pc.N + slice + pos * pc.N + col] = scratch[sb + 256u + e];
      continue;
    }
    if (GATED == 1u) y = y / (1.0 + exp(-y)) * scratch[sb + 256u + e];
    // Dense and gate/up: row pos (route_pack: h in packed order); down: the entry's own row.
    res[slice + (MODE == 1u && GATED == 0u ? uint(rows[pos]) : pos) * pc.N + col] = y;
  }
  subgroupMemoryBarrierShared();
  subgroupBarrier();  // the scratch is read before the next block overwrites it
}

// QG_EPILOGUE: QG_BLOCK(i, j) for every block of a subgroup's QG_MR x QG_MC, with literal indices.
#if QG_MC == 1
#define QG_ROW(i) QG_BLOCK(i, 0u)
#elif QG_MC == 2
#define QG_ROW(i) QG_BLOCK(i, 0u) QG_BLOCK(i, 1u)
#elif QG_MC == 4
#define QG_ROW(i) QG_BLOCK(i, 0u) QG_BLOCK(i, 1u) QG_BLOCK(i, 2u) QG_BLOCK(i, 3u)
#else
#error QG_MC must be 1, 2 or 4
#endif
#if QG_MR == 1
#define QG_EPILOGUE QG_ROW(0u)
#elif QG_MR == 2
#define QG_EPILOGUE QG_ROW(0u) QG_ROW(1u)
#elif QG_MR == 4
#define QG_EPILOGUE QG_ROW(0u) QG_ROW(1u) QG_ROW(2u) QG_ROW(3u)
#else
#error QG_MR must be 1, 2 or 4
#endif
#endif  // QG_SCALAR

// The next step's prefetched loads into the slots this step's staging has emptied (A, Q4_K runs, raw K-quant words).
#define QG_NEXT_LOADS                                                                                    \
  if (u0 + QG_U < ue) {                                                                                  \
    if (PFA && (DIAG & 64u) == 0u)                                                                       \
      [[unroll]] for (uint q = 0u; q < QG_AREG; ++q)                                                     \
        if (q < ASLOTS) {                                                                                \
          if (AHF) rah[q] = a_load_h(lid + q * WG, u0 + QG_U);                                           \
          else ra[q] = a_load(lid + q * WG, u0 + QG_U);                                                  \
        }                                                                                                \
    if (PFW && (DIAG & 128u) == 0u)                                                                      \
      [[unroll]] for (uint q = 0u; q < QG_WREG; ++q)                                                     \
        if (q < WSLOTS) w_load(lid + q * WG, u0 + QG_U, n0, wrow0, rh[q], rq[q]);                        \
    if (PFR && (DIAG & 128u) == 0u)                                                                      \
      [[unroll]] for (uint q = 0u; q < QG_WREG; ++q) if (q < WSLOTS) r_load(lid + q * WG, u0 + QG_U, n0, wrow0, rr[q]); \
  }

void main() {
  const uint lid = gl_LocalInvocationID.x;
  uint p0, p1, n0, wrow0;  // tile rows [p0, p1) (positions: A rows in MODE 0, packed entries in MODE 1)
  uint split = 0u;         // MODE 0: this workgroup's part of K
  if (MODE == 0u) {
    const uint nrow = (pc.T + BR - 1u) / BR, tiles = nrow * pc.ncol;
    uint g = hl_group_index();
    if (g >= tiles * KS) return;
    if (KS > 1u) {  // at KS 1 split stays a constant 0 (g < tiles): no dynamic K range, no slice offset
      split = g / tiles;
      g %= tiles;
    }
    n0 = (g / nrow) * BN;
    p0 = (g % nrow) * BR;
    p1 = min(p0 + BR, pc.T);
    wrow0 = 0u;
    for (uint r = lid; r < BR; r += WG) arow[r] = p0 + r < p1 ? (p0 + r) * (pc.K / 4u) : ROUTE_NONE;
  } else {
    uint e, g = hl_group_index();
    if ((DIAG & 512u) != 0u && g >= (DIAG >> 16u)) return;
    if (KS > 1u) {  // a tile's K parts in neighbouring workgroups (the working ones stay the grid's first)
      split = g % KS;
      g /= KS;
    }
    if (!route_tile_at(g, e, p0, p1, n0)) return;  // uniform per workgroup: past the packed tiles
    wrow0 = (DIAG & 8u) != 0u ? 0u : e * pc.N;
    // route_tile wrote this invocation's arow entries in floats of A; here A is read as vec4.
    for (uint r = lid; r < BR; r += WG) arow[r] = arow[r] == ROUTE_NONE ? ROUTE_NONE : arow[r] / 4u;
  }

#ifdef QG_SCALAR
  const uint tr = lid / SC, tc = lid % SC;  // this invocation's rows tr + SR i, columns tc + SC j
  const uint NACC = QG_TM * QG_TN;
  float acc[NACC];
  [[unroll]] for (uint i = 0u; i < NACC; ++i) acc[i] = 0.0;
#if QG_GATED_ACC
  float accu[NACC];
  [[unroll]] for (uint i = 0u; i < NACC; ++i) accu[i] = 0.0;
#endif
#else
  const uint s = gl_SubgroupID;
  const bool computes = s < SR * SC;  // uniform within the subgroup
  const uint r0 = 16u * QG_MR * (s / SC), c0 = 16u * QG_MC * (s % SC);
  hl_cm_acc acc[NACC];
  [[unroll]] for (uint i = 0u; i < NACC; ++i) acc[i] = hl_cm_fill(0.0);
#if QG_GATED_ACC
  hl_cm_acc accu[NACC];
  [[unroll]] for (uint i = 0u; i < NACC; ++i) accu[i] = hl_cm_fill(0.0);
#endif
#endif

  const uint units = pc.K / 32u;  // a multiple of QG_U (the host checks)
  // This workgroup's steps of K: all of them, or split `split` of KS (whole steps; uniform per workgroup).
  const uint steps = units / QG_U, per = (steps + KS - 1u) / KS;
  const uint ub = min(split * per, steps) * QG_U, ue = min(split * per + per, steps) * QG_U;
  // Next step's A values and Q4_K weight units are loaded into registers before this step's products and stored
  // to shared memory after them (the loads' latency hidden behind the matrix work), where they fit in QG_AREG and
  // QG_WREG slots per invocation; else each step loads and stages in turn.
  const uint AV = BR * 8u * QG_U, WU = BN * QG_U;  // A vec4s and weight units (per weight) of one step
  // (Plain locals: glslang mis-emits these specialization-constant expressions as constants; the driver folds them.)
  uint pf = PREFETCH;
  bool PFA = (pf & 1u) != 0u && AV <= uint(QG_AREG) * WG;
  // Slots this configuration fills (specialization constants: the driver drops the rest, and their registers).
  const uint ASLOTS = (AV + WG - 1u) / WG, WSLOTS = (WR + WG - 1u) / WG;
  bool PFW = (pf & 2u) != 0u && WR <= uint(QG_WREG) * WG && QG_U <= QG_UMAX && TYPE0 == HLQ_Q4_K &&
                  (GATED == 0u || TYPE1 == HLQ_Q4_K);
  // Bit 3: those loads issued as soon as the step's staging has emptied the slots, before the barrier that ends it
  // (their round trip then overlaps the wait for the slowest subgroup's staging too), instead of after it.
  bool EARLY = (pf & 8u) != 0u;
  bool PFR = (pf & 4u) != 0u && WR <= uint(QG_WREG) * WG && QG_U == 1u && GATED == 0u &&
             (TYPE0 == HLQ_Q6_K || TYPE0 == HLQ_Q5_K);
  vec4 ra[QG_AREG];
  uvec2 rah[QG_AREG];  // HALF_H down: A's raw f16 bits
  bool AHF = HALF_H == 1u && MODE == 1u && GATED == 0u;
  uvec4 rh[QG_WREG], rq[QG_WREG][QG_UMAX];
  HlqRaw rr[QG_WREG];
  if ((DIAG & 32u) != 0u && lid == 0u) diag_pad[64u * (DIAG >> 16u)] = uvec4(lid);
  barrier();  // arow written
  if ((DIAG & 32u) != 0u && p0 == 0xFFFFFFFFu) res[0] = float(diag_pad[64u * (DIAG >> 16u)].x);  // never: keeps diag_pad
  if (PFA)
    [[unroll]] for (uint q = 0u; q < QG_AREG; ++q)
      if (q < ASLOTS) {
        if (AHF) rah[q] = a_load_h(lid + q * WG, ub);
        else ra[q] = a_load(lid + q * WG, ub);
      }
  if (PFW)
    [[unroll]] for (uint q = 0u; q < QG_WREG; ++q) if (q < WSLOTS) w_load(lid + q * WG, ub, n0, wrow0, rh[q], rq[q]);
  if (PFR) [[unroll]] for (uint q = 0u; q < QG_WREG; ++q) if (q < WSLOTS) r_load(lid + q * WG, ub, n0, wrow0, rr[q]);
  for (uint u0 = ub; u0 < ue; u0 += QG_U) {
    barrier();  // the previous step consumed
    if ((DIAG & 2u) == 0u || u0 == ub) {
      // A: BR rows x the step's units, each its two runs of 16 values (at the weight unit's K offsets), f32 -> f16.
      if (PFA) {
        [[unroll]] for (uint q = 0u; q < QG_AREG; ++q)
          if (q < ASLOTS && lid + q * WG < AV) as[a_slot(lid + q * WG)] = AHF ? a_stage_h(rah[q]) : QG_AT(QG_PERM4(ra[q]));
      } else {
        for (uint i = lid; i < AV; i += WG) as[a_slot(i)] = AHF ? a_stage_h(a_load_h(i, u0)) : QG_AT(QG_PERM4(a_load(i, u0)));
      }
    }
    if ((DIAG & 1u) == 0u || u0 == ub) {
      // Weights: BN rows x the step's units, decoded.
      if (PFW) {
        QG_W_DECODES
      } else if (PFR) {
        QG_R_DECODES
      } else {
        for (uint i = lid; i < WU; i += WG) {
          const uint c = i / QG_U, uu = i % QG_U, n = n0 + c;
          const bool ok = n < pc.N;
          if (COLS == 1u) {
            const uint u = u0 + uu;
            stage_unit_cols(TYPE0, 0u, ok, col_blk(TYPE0, wrow0, n, u / 8u), 16u * pc.N, u % 8u, c * KP + 8u * uu);
            if (GATED == 1u) stage_unit_cols(TYPE1, 1u, ok, col_blk(TYPE1, wrow0, n, u / 8u), 16u * pc.N, u % 8u, c * KP + 8u * uu);
            continue;
          }
          stage_unit(TYPE0, 0u, ok, (wrow0 + n) * pc.rb0, u0 + uu, c * KP + 8u * uu);
          if (GATED == 1u) stage_unit(TYPE1, 1u, ok, (wrow0 + n) * pc.rb1, u0 + uu, c * KP + 8u * uu);
        }
      }
    }
    if (EARLY) QG_NEXT_LOADS
    barrier();  // the step is staged
    if (!EARLY) QG_NEXT_LOADS
#ifdef QG_SCALAR
    if ((DIAG & 4u) == 0u) {
#ifdef QG_F16_WEIGHTS
      [[unroll]] for (uint kk = 0u; kk < KU / 4u; kk += 2u) {  // 8 values at a time
        vec4 a0[QG_TM], a1[QG_TM];
        [[unroll]] for (uint i = 0u; i < QG_TM; ++i) {
          a0[i] = as[(tr + SR * i) * KP + kk];
          a1[i] = as[(tr + SR * i) * KP + kk + 1u];
        }
        [[unroll]] for (uint j = 0u; j < QG_TN; ++j) {
          const uint wb = (tc + SC * j) * KP + kk;
          vec4 b0 = vec4(ws0[wb]), b1 = vec4(ws0[wb + 1u]);
          [[unroll]] for (uint i = 0u; i < QG_TM; ++i) acc[i * QG_TN + j] = qg_dot8(a0[i], a1[i], b0, b1, acc[i * QG_TN + j]);
#if QG_GATED_ACC
          b0 = vec4(ws1[wb]);
          b1 = vec4(ws1[wb + 1u]);
          [[unroll]] for (uint i = 0u; i < QG_TM; ++i) accu[i * QG_TN + j] = qg_dot8(a0[i], a1[i], b0, b1, accu[i * QG_TN + j]);
#endif
        }
      }
#else
      [[unroll]] for (uint kk = 0u; kk < KU / 4u; ++kk) {  // 4 values at a time
        vec4 av[QG_TM];
        [[unroll]] for (uint i = 0u; i < QG_TM; ++i) av[i] = as[(tr + SR * i) * KP + kk];
        [[unroll]] for (uint j = 0u; j < QG_TN; ++j) {
          const uint wb = (tc + SC * j) * KP + kk;
          const vec4 b = ws0[wb];
          [[unroll]] for (uint i = 0u; i < QG_TM; ++i) acc[i * QG_TN + j] = qg_dot4(av[i], b, acc[i * QG_TN + j]);
#if QG_GATED_ACC
          const vec4 bu = ws1[wb];
          [[unroll]] for (uint i = 0u; i < QG_TM; ++i) accu[i * QG_TN + j] = qg_dot4(av[i], bu, accu[i * QG_TN + j]);
#endif
        }
      }
#endif
    }
#else
    if (computes && (DIAG & 4u) == 0u) {
      [[unroll]] for (uint kk = 0u; kk < KU; kk += 16u) {
        hl_cm_a am[QG_MR];
        [[unroll]] for (uint i = 0u; i < QG_MR; ++i)
          HL_CM_LOAD_A(am[i], as, (r0 + 16u * i) * KP + kk / 4u, HL_CM_ROW_MAJOR, KP);
        [[unroll]] for (uint j = 0u; j < QG_MC; ++j) {
          hl_cm_b bm;
          HL_CM_LOAD_B(bm, ws0, (c0 + 16u * j) * KP + kk / 4u, HL_CM_COL_MAJOR, KP);
          [[unroll]] for (uint i = 0u; i < QG_MR; ++i) acc[i * QG_MC + j] = hl_cm_muladd(am[i], bm, acc[i * QG_MC + j]);
#if QG_GATED_ACC
          HL_CM_LOAD_B(bm, ws1, (c0 + 16u * j) * KP + kk / 4u, HL_CM_COL_MAJOR, KP);
          [[unroll]] for (uint i = 0u; i < QG_MR; ++i) accu[i * QG_MC + j] = hl_cm_muladd(am[i], bm, accu[i * QG_MC + j]);
#endif
        }
      }
    }
#endif
  }

#ifdef QG_SCALAR
  // Epilogue: each invocation its own outputs, rows inside [p0, p1), columns < N (neighbouring invocations write
  // neighbouring columns).
  const uint slice = split * pc.T * pc.N;
  [[unroll]] for (uint i = 0u; i < QG_TM; ++i) {
    const uint pos = p0 + tr + SR * i;
    if (pos >= p1) continue;
    // Dense and gate/up: row pos (route_pack: h in packed order); down: the entry's own row.
    const uint orow = MODE == 1u && GATED == 0u ? uint(rows[pos]) : pos;
    [[unroll]] for (uint j = 0u; j < QG_TN; ++j) {
      const uint col = n0 + tc + SC * j;
      if (col >= pc.N) continue;
      float y = acc[i * QG_TN + j];
#if QG_GATED_ACC
      if (PAIR == 1u) {  // both products, raw
        res[slice + orow * pc.N + col] = y;
        res[KS * pc.T * pc.N + slice + orow * pc.N + col] = accu[i * QG_TN + j];
        continue;
      }
      y = y / (1.0 + exp(-y)) * accu[i * QG_TN + j];
#endif
      res[slice + orow * pc.N + col] = y;
    }
  }
#else
  // Epilogue, one 16 x 16 block at a time through this subgroup's scratch: rows inside [p0, p1), columns < N.
  // Every accumulator is named by a constant index (QG_EPILOGUE expands the blocks): an index the compiler cannot
  // resolve keeps the whole array in memory, the K loop's products included.
  if (!computes) return;
  const uint slice = split * pc.T * pc.N;
#if QG_GATED_ACC
#define QG_BLOCK(i, j) epilogue_block(acc[(i) * QG_MC + (j)], accu[(i) * QG_MC + (j)], s, p0, p1, n0 + c0 + 16u * (j), r0 + 16u * (i), slice);
#else
#define QG_BLOCK(i, j) epilogue_block(acc[(i) * QG_MC + (j)], acc[(i) * QG_MC + (j)], s, p0, p1, n0 + c0 + 16u * (j), r0 + 16u * (i), slice);
#endif
  QG_EPILOGUE
#endif
}

#endif
