// moe_experts vulkan:route_pack_warp, stage 4: the grouped GEMM over route-packed rows with a tile per subgroup and no
// workgroup barrier in its K steps (two per A chunk). route_pack_coopmat's kernel (ops/shaders/qgemm_cm.glsl) shares each K step's
// decoded weights across its workgroup, so every step is two workgroup barriers around one round trip to memory, and at
// ~16 tokens per expert a step holds too little work to hide it. Here each subgroup owns QG_MR x QG_MC blocks of
// 16 x 16 outputs (32 packed rows by 16 QG_MC weight rows; GATED: of gate and of up) and walks K alone:
//   - its weight rows' units of the step are decoded into its own shared tile (qgemm_stage.glsl), the next step's
//     loaded into registers first (Q4_K: one block head and QG_U unit loads per row run);
//   - A is f16 rows in packed order (route_gather_f16.comp for gate/up; the gate/up pass writes h that way for down),
//     staged by the whole workgroup in shared memory ACH units of K at a time (a chunk: whole ggml blocks where units
//     permute values inside a block, so the chunk holds every run its units read): two workgroup barriers per chunk;
//     the subgroups walk the chunk's steps with their A matrices read from it;
//   - only subgroup barriers order a subgroup's own staging.
// Rows past the expert's (the tile's last rows) read the next expert's rows or the buffer's padding; their results are
// dropped. Outputs: GATED, h = silu(gate) * up as f16 pairs in packed order (the down pass's A); else the expert output
// [T k, N] f32 by entry (route_scatter's input). Include after defining QG_MC (16-column blocks per subgroup) and, for
// emulated matrices, HL_CM_EMULATE and QG_WREG; QG_GATED_ACC 1 for the gate/up kernel.
#ifndef HL_ROUTE_WARP_CM_GLSL
#define HL_ROUTE_WARP_CM_GLSL
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;   // SG * the device's largest subgroup size
layout(constant_id = 1) const uint SG = 4;     // subgroups per workgroup, each 16 QG_MC columns of its own
layout(constant_id = 3) const uint GATED = 1;  // 1: gate and up with SwiGLU; 0: down
layout(constant_id = 5) const uint TYPE0 = 12; // ggml type ids of w0 and w1
layout(constant_id = 6) const uint TYPE1 = 12;
layout(constant_id = 8) const uint QG_U = 1;   // 32-value units of K per step (divides 8; the host keeps K a multiple)
layout(constant_id = 10) const uint PREFETCH = 1;  // Q4_K weights: the next step's units held in registers
layout(constant_id = 11) const uint ACH = 8;   // units of K per staged A chunk (divides K's units; K-quants: a multiple of 8)

const uint QG_MR = 2u;             // 32 packed rows per tile: ~16 tokens per expert at T = 512
const uint CR = 16u * QG_MC;       // weight rows (output columns) per subgroup
const uint BM = 16u * QG_MR, BN = CR * SG;  // the workgroup's tile (route_gemm.glsl's names)
const uint KP = 8u * QG_U + 2u;    // f16vec4 per staged weight row: the step's values, padded by 8 halves
const uint NW = GATED + 1u;        // weights per pass
const uint RUNS = CR * NW;         // row runs per step per subgroup (a weight row's QG_U units)
#define QG_WT f16vec4
#include "common.glsl"
#include "coopmat.glsl"

layout(std430, binding = 0) readonly buffer A16 { f16vec4 a16[]; };  // [rows + BM, K] f16, packed order
layout(std430, binding = 1) readonly buffer Rows { int rows[]; };     // [T k] entry ids, packed order
layout(std430, binding = 2) readonly buffer Off { int offsets[]; };   // [E + 1]
layout(std430, binding = 3) readonly buffer Tiles { int tiles[]; };   // [E + 1]
layout(std430, binding = 4) readonly buffer W0 { uint w0[]; };        // raw rows (WeightStore::device_raw)
layout(std430, binding = 5) readonly buffer W1 { uint w1[]; };        // GATED: up
layout(std430, binding = 6) writeonly buffer Res { float res[]; };    // down: [T k, N] f32 by entry
layout(std430, binding = 6) writeonly buffer ResH { uint resh[]; };   // gate/up: h [rows, N] f16 pairs, packed order
layout(std430, binding = 7) readonly buffer W04 { uvec4 w04[]; };     // w0 as 16-byte units
layout(std430, binding = 8) readonly buffer W14 { uvec4 w14[]; };
layout(push_constant) uniform Push {
  uint E, K;      // experts; the reduction length
  uint N;         // output columns (weight rows per expert)
  uint k;         // slots per token
  uint ncol;      // ceil(N / BN)
  uint rb0, rb1;  // row bytes of w0, w1
} pc;

#define HLQ_WORD(buf, i) ((buf) == 0u ? w0[i] : w1[i])
#define HLQ_UVEC4(buf, i) ((buf) == 0u ? w04[i] : w14[i])
#include "quant_blocks.glsl"

shared f16vec4 ws0[SG * CR * KP];
shared f16vec4 ws1[GATED == 1u ? SG * CR * KP : 1u];
shared float scratch[SG * 256u * NW];
shared uint arow[BM];  // route_tile's (unused here: A is read by packed position)
const uint KPA = 8u * ACH + 2u;  // f16vec4 per staged A row: the chunk's values, padded by 8 halves
shared f16vec4 as16[BM * KPA];
const uint NA = (BM * 8u * ACH + WG - 1u) / WG;  // staging loads per invocation
#include "qgemm_stage.glsl"
#include "route_gemm.glsl"

#ifdef HL_CM_EMULATE
const uint HL_CM_ID_a16 = 0u, HL_CM_ID_ws0 = 1u, HL_CM_ID_ws1 = 2u, HL_CM_ID_as16 = 3u;
float hl_cm_read(uint id, uint i) {
  const f16vec4 v = id == 0u ? a16[i / 4u] : id == 1u ? ws0[i / 4u] : id == 2u ? ws1[i / 4u] : as16[i / 4u];
  return float(v[i % 4u]);
}
#endif

#ifndef QG_WREG
#define QG_WREG 2  // row runs per invocation: 32 runs per step over subgroups of 16 or more
#endif

// Row run r of the step at units [u0, u0 + QG_U): weight r / CR, row r % CR of this subgroup's columns from column c0
// (zeros past N).
void run_load(uint r, uint u0, uint c0, uint wrow0, out uvec4 head, out uvec4 qs[QG_UMAX]) {
  const uint b = r / CR, n = c0 + r % CR;
  q4k_run_load(b, (wrow0 + n) * (b == 0u ? pc.rb0 : pc.rb1), r < RUNS && n < pc.N, u0, head, qs);
}

// The A matrices of one step from the staged chunk whose first value is K offset KB: row block i, unit uu, run h (0 low,
// 1 high): 16 packed rows by the 16 values of that run.
#define A_LOAD_SH(am, u0, KB)                                                                   \
  [[unroll]] for (uint uu = 0u; uu < QG_UMAX; ++uu)                                             \
    if (uu < QG_U) {                                                                            \
      const uvec2 runs = hlq_unit_runs(TYPE0, (u0) + uu) - (KB);                                \
      [[unroll]] for (uint i = 0u; i < QG_MR; ++i) {                                            \
        HL_CM_LOAD_A(am[(i * QG_UMAX + uu) * 2u], as16, 16u * i * KPA + runs.x / 4u, HL_CM_ROW_MAJOR, KPA);      \
        HL_CM_LOAD_A(am[(i * QG_UMAX + uu) * 2u + 1u], as16, 16u * i * KPA + runs.y / 4u, HL_CM_ROW_MAJOR, KPA); \
      }                                                                                         \
    }

// One K step at units [U0, U0 + QG_U): its weight units into the subgroup's tiles, the next step's Q4_K units loaded
// into registers, its A matrices read from the chunk into CUR, then its products.
#define RW_STEP(CUR, U0)                                                                                     \
  {                                                                                                               \
    if (pfw) {                                                                                                    \
      [[unroll]] for (uint q = 0u; q < QG_WREG; ++q) {                                                            \
        const uint r = lane + q * S, b = r / CR, c = r % CR;                                                      \
        if (q < RPL && r < RUNS)                                                                                  \
          [[unroll]] for (uint uu = 0u; uu < QG_UMAX; ++uu)                                                       \
            if (uu < QG_U) q4k_decode(b, (U0) + uu, rh[q], rq[q][uu], wb + c * KP + 8u * uu);                     \
      }                                                                                                           \
    } else {                                                                                                      \
      for (uint r = lane; r < RUNS; r += S) {                                                                     \
        const uint b = r / CR, c = r % CR, n = c0 + c;                                                            \
        for (uint uu = 0u; uu < QG_U; ++uu)                                                                       \
          stage_unit(b == 0u ? TYPE0 : TYPE1, b, n < pc.N, (wrow0 + n) * (b == 0u ? pc.rb0 : pc.rb1), (U0) + uu,  \
                     wb + c * KP + 8u * uu);                                                                      \
      }                                                                                                           \
    }                                                                                                             \
    subgroupMemoryBarrierShared();                                                                                \
    subgroupBarrier();                                                                                            \
    if ((U0) + QG_U < units) {                                                                                    \
      if (pfw)                                                                                                    \
        [[unroll]] for (uint q = 0u; q < QG_WREG; ++q)                                                            \
          if (q < RPL) run_load(lane + q * S, (U0) + QG_U, c0, wrow0, rh[q], rq[q]);                              \
    }                                                                                                             \
    A_LOAD_SH(CUR, U0, akb)                                                                                       \
    [[unroll]] for (uint uu = 0u; uu < QG_UMAX; ++uu) {                                                           \
      if (uu >= QG_U) continue;                                                                                   \
      [[unroll]] for (uint h = 0u; h < 2u; ++h)                                                                   \
        [[unroll]] for (uint j = 0u; j < QG_MC; ++j) {                                                            \
          hl_cm_b bm;                                                                                             \
          HL_CM_LOAD_B(bm, ws0, wb + 16u * j * KP + 8u * uu + 4u * h, HL_CM_COL_MAJOR, KP);                       \
          [[unroll]] for (uint i = 0u; i < QG_MR; ++i)                                                            \
            acc[i * QG_MC + j] = hl_cm_muladd(CUR[(i * QG_UMAX + uu) * 2u + h], bm, acc[i * QG_MC + j]);         \
          RW_UP(CUR)                                                                                              \
        }                                                                                                         \
    }                                                                                                             \
    subgroupMemoryBarrierShared();                                                                                \
    subgroupBarrier(); /* the tiles read before the next step overwrites them */                                  \
  }
#if QG_GATED_ACC
#define RW_UP(CUR)                                                                                 \
  HL_CM_LOAD_B(bm, ws1, wb + 16u * j * KP + 8u * uu + 4u * h, HL_CM_COL_MAJOR, KP);                \
  [[unroll]] for (uint i = 0u; i < QG_MR; ++i)                                                     \
    accu[i * QG_MC + j] = hl_cm_muladd(CUR[(i * QG_UMAX + uu) * 2u + h], bm, accu[i * QG_MC + j]);
#else
#define RW_UP(CUR)
#endif

void main() {
  uint e, p0, p1, n0;
  if (!route_tile(e, p0, p1, n0)) return;  // uniform per workgroup
  const uint s = gl_SubgroupID, lane = gl_SubgroupInvocationID, S = gl_SubgroupSize;
  const uint c0 = n0 + s * CR;  // this subgroup's first column
  const bool live = s < SG && c0 < pc.N;  // uniform per subgroup (every subgroup stages A)
  const uint wrow0 = e * pc.N, wb = s * CR * KP;
  const uint units = pc.K / 32u;
  const uint RPL = (RUNS + S - 1u) / S;  // row runs per invocation
  bool pfw = PREFETCH != 0u && RPL <= uint(QG_WREG) && QG_U <= QG_UMAX && TYPE0 == HLQ_Q4_K &&
             (GATED == 0u || TYPE1 == HLQ_Q4_K);

  hl_cm_acc acc[QG_MR * QG_MC];
  [[unroll]] for (uint i = 0u; i < QG_MR * QG_MC; ++i) acc[i] = hl_cm_fill(0.0);
#if QG_GATED_ACC
  hl_cm_acc accu[QG_MR * QG_MC];
  [[unroll]] for (uint i = 0u; i < QG_MR * QG_MC; ++i) accu[i] = hl_cm_fill(0.0);
#endif
  hl_cm_a am[QG_MR * QG_UMAX * 2u];
  uvec4 rh[QG_WREG], rq[QG_WREG][QG_UMAX];
  if (pfw && live)
    [[unroll]] for (uint q = 0u; q < QG_WREG; ++q) if (q < RPL) run_load(lane + q * S, 0u, c0, wrow0, rh[q], rq[q]);

  // A chunk at a time: the tile's 32 rows of ACH units staged by the whole workgroup (every load issued before the
  // stores), then each live subgroup's steps over it.
  const uint CV = 8u * ACH, lid = gl_LocalInvocationID.x;
  for (uint ch = 0u; ch < units; ch += ACH) {
    f16vec4 av[NA];
    [[unroll]] for (uint q = 0u; q < NA; ++q) {
      const uint i = lid + q * WG, r = i / CV;
      av[q] = i < BM * CV ? a16[(p0 + r) * (pc.K / 4u) + ch * 8u + i % CV] : f16vec4(0.0);
    }
    barrier();  // the previous chunk read
    [[unroll]] for (uint q = 0u; q < NA; ++q) {
      const uint i = lid + q * WG;
      if (i < BM * CV) as16[(i / CV) * KPA + i % CV] = av[q];
    }
    barrier();
    const uint akb = ch * 32u;
    if (live)
      for (uint u0 = ch; u0 < ch + ACH; u0 += QG_U) RW_STEP(am, u0)
  }
  if (!live) return;

  // Epilogue, a 16 x 16 block at a time through this subgroup's scratch: rows inside [p0, p1), columns below N.
  const uint sb = s * 256u * NW;
  [[unroll]] for (uint i = 0u; i < QG_MR; ++i) {
    [[unroll]] for (uint j = 0u; j < QG_MC; ++j) {
      HL_CM_STORE(scratch, sb, acc[i * QG_MC + j], HL_CM_ROW_MAJOR, 16u);
#if QG_GATED_ACC
      HL_CM_STORE(scratch, sb + 256u, accu[i * QG_MC + j], HL_CM_ROW_MAJOR, 16u);
#endif
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      if (GATED == 1u) {
        for (uint x = lane; x < 128u; x += S) {  // column pairs: h as packed f16
          const uint rr = x / 8u, cc = 2u * (x % 8u), pos = p0 + 16u * i + rr, col = c0 + 16u * j + cc;
          if (pos >= p1 || col >= pc.N) continue;
          vec2 y;
          [[unroll]] for (uint t = 0u; t < 2u; ++t) {
            const float g = scratch[sb + rr * 16u + cc + t];
            y[t] = g / (1.0 + exp(-g)) * scratch[sb + 256u + rr * 16u + cc + t];
          }
          resh[(pos * pc.N + col) / 2u] = packHalf2x16(y);
        }
      } else {
        for (uint x = lane; x < 256u; x += S) {
          const uint pos = p0 + 16u * i + x / 16u, col = c0 + 16u * j + x % 16u;
          if (pos < p1 && col < pc.N) res[uint(rows[pos]) * pc.N + col] = scratch[sb + x];
        }
      }
      subgroupMemoryBarrierShared();
      subgroupBarrier();  // read before the next block overwrites it
    }
  }
}

#endif
