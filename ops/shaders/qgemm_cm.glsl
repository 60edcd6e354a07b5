// Y = A W^T on cooperative matrices, W read as ggml blocks (or f32/f16 rows) and decoded into shared f16 tiles
// inside the K loop (never a dequantized copy of the weight in memory); A rows are f32, rounded to f16 as they
// are staged; f32 accumulation. Shared by matmul / lm_head (vulkan:qgemm_coopmat: A = the prompt chunk's rows)
// and moe_experts / shared_expert (vulkan:route_pack_coopmat: A = the rows route_pack packed for one expert).
//
// A workgroup computes a BR x BN tile of Y: BR rows of A (tokens, or one expert's packed entries) by BN weight
// rows (output columns). NSG subgroups each own a strip of BN / NSG columns over all BR rows: (BR / 16) x
// (BN / NSG / 16) accumulators per weight (GATED: gate and up, the SwiGLU's two products, with h = silu(gate) *
// up in the epilogue). The K loop stages BK values of each A row and each weight row per step (BK = 64, or 128
// when a weight is Q6_K: a slice then holds whole ggml units of every type, each value at its natural K offset,
// so A is staged in plain order and any mix of weight types works), then runs BK / 16 rounds of matrix products.
// The epilogue goes through a 16 x 16 f32 scratch per subgroup: only rows inside the tile's range and columns
// below N are written.
//
// Work split: MODE 0 (dense): workgroup g takes column tile g / nrow and row tile g % nrow (consecutive
// workgroups share one weight tile in L2). MODE 1 (route_pack, GATED 1: gate/up; GATED 0: down): the compact
// tile list of route_offsets.comp (route_tile in route_gemm.glsl): expert e, packed rows [p0, p1), columns n0..
//
// The host sizes the workgroup as NSG subgroups of the device's largest subgroup size with full subgroups, so
// every strip has its subgroup whatever size the device runs (a spare subgroup only stages and writes); every
// branch around a cooperative-matrix operation is subgroup-uniform. Include after defining nothing: this file
// declares its bindings; qgemm_cm.comp and qgemm_cm_emul.comp (HL_CM_EMULATE, for devices without cooperative
// matrices) include it.
#ifndef HL_QGEMM_CM_GLSL
#define HL_QGEMM_CM_GLSL
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;   // NSG * the largest subgroup size
layout(constant_id = 1) const uint NSG = 4;    // subgroups that compute
layout(constant_id = 2) const uint BR = 32;    // A rows per tile (multiple of 16)
layout(constant_id = 3) const uint BN = 64;    // output columns per tile (multiple of 16 NSG)
layout(constant_id = 4) const uint BK = 64;    // depth per staged slice: 64, or 128 with a Q6_K weight
layout(constant_id = 5) const uint GATED = 0;  // 1: two weights (gate, up), y = silu(A gate^T) * (A up^T)
layout(constant_id = 6) const uint MODE = 0;   // 0: dense rows; 1: route_pack tiles
layout(constant_id = 7) const uint TYPE0 = 12; // ggml type ids of w0 and w1 (F32 0, F16 1, Q8_0 8, Q4_K 12, ...)
layout(constant_id = 8) const uint TYPE1 = 12;
#define BM BR  // route_gemm.glsl's name for the rows per tile
#include "common.glsl"
#include "coopmat.glsl"

layout(std430, binding = 0) readonly buffer A { vec4 a4[]; };        // [rows, K] f32
layout(std430, binding = 1) readonly buffer Rows { int rows[]; };     // MODE 1: [T k] entry ids, packed order
layout(std430, binding = 2) readonly buffer Off { int offsets[]; };   // MODE 1: [E + 1]
layout(std430, binding = 3) readonly buffer Tiles { int tiles[]; };   // MODE 1: [E + 1]
layout(std430, binding = 4) readonly buffer W0 { uint w0[]; };        // raw rows (WeightStore::device_raw)
layout(std430, binding = 5) readonly buffer W1 { uint w1[]; };        // GATED: up
layout(std430, binding = 6) writeonly buffer Res { float res[]; };
layout(push_constant) uniform Push {
  uint E, K;      // MODE 1: experts; the reduction length
  uint N;         // output columns (weight rows per expert)
  uint k;         // MODE 1: slots per token
  uint ncol;      // ceil(N / BN)
  uint rb0, rb1;  // row bytes of w0, w1
  uint T;         // MODE 0: rows of A
} pc;

#define HLQ_WORD(buf, i) ((buf) == 0u ? w0[i] : w1[i])
#include "quant_blocks.glsl"

const uint KP = BK + 8u;          // f16 per staged row: 16-byte aligned rows, banks shifted per row
const uint WN = BN / NSG;         // columns per subgroup strip
const uint MR = BR / 16u, MC = WN / 16u;
const uint NACC = MR * MC * (GATED + 1u);

shared float16_t as[BR * KP];
shared float16_t ws0[BN * KP];
shared float16_t ws1[GATED == 1u ? BN * KP : 16u];
shared float scratch[NSG * 256u * (GATED + 1u)];
shared uint arow[BR];  // offset (in vec4) of each tile row in A, ROUTE_NONE past the tile's rows
#include "route_gemm.glsl"

#ifdef HL_CM_EMULATE
const uint HL_CM_ID_as = 0u, HL_CM_ID_ws0 = 1u, HL_CM_ID_ws1 = 2u;
float hl_cm_read(uint id, uint i) { return float(id == 0u ? as[i] : id == 1u ? ws0[i] : ws1[i]); }
#endif

// Unit u of weight row `row` (byte offset) of buffer buf, decoded at its natural offsets from k0 into tile column c.
void stage_unit(uint type, uint buf, bool ok, uint row, uint u, uint k0, uint c) {
  vec4 v[8];
  if (ok) {
    vec4 q[8], ms;
    hlq_unit(type, buf, row, u, q, ms);
    hlq_dequant(q, ms, v);
  } else {
    [[unroll]] for (uint i = 0u; i < 8u; ++i) v[i] = vec4(0.0);
  }
  const uvec2 runs = hlq_unit_runs(type, u) - k0;
  [[unroll]] for (uint i = 0u; i < 8u; ++i) {
    const uint at = c * KP + (i < 4u ? runs.x : runs.y) + 4u * (i % 4u);
    const f16vec4 h = f16vec4(v[i]);
    if (buf == 0u) {
      ws0[at] = h.x, ws0[at + 1u] = h.y, ws0[at + 2u] = h.z, ws0[at + 3u] = h.w;
    } else {
      ws1[at] = h.x, ws1[at + 1u] = h.y, ws1[at + 2u] = h.z, ws1[at + 3u] = h.w;
    }
  }
}

void main() {
  const uint lid = gl_LocalInvocationID.x;
  uint p0, p1, n0, wrow0;  // tile rows [p0, p1) (positions: A rows in MODE 0, packed entries in MODE 1)
  if (MODE == 0u) {
    const uint nrow = (pc.T + BR - 1u) / BR, g = hl_group_index();
    if (g >= nrow * pc.ncol) return;
    n0 = (g / nrow) * BN;
    p0 = (g % nrow) * BR;
    p1 = min(p0 + BR, pc.T);
    wrow0 = 0u;
    for (uint r = lid; r < BR; r += WG) arow[r] = p0 + r < p1 ? (p0 + r) * (pc.K / 4u) : ROUTE_NONE;
  } else {
    uint e;
    if (!route_tile(e, p0, p1, n0)) return;  // uniform per workgroup: past the packed tiles
    wrow0 = e * pc.N;
    // route_tile wrote this invocation's arow entries in floats of A; here A is read as vec4.
    for (uint r = lid; r < BR; r += WG) arow[r] = arow[r] == ROUTE_NONE ? ROUTE_NONE : arow[r] / 4u;
  }

  const uint s = gl_SubgroupID;
  const bool computes = s < NSG;  // uniform within the subgroup
  const uint c0 = s * WN;
  hl_cm_acc acc[NACC];
  [[unroll]] for (uint i = 0u; i < NACC; ++i) acc[i] = hl_cm_fill(0.0);

  const uint units = BK / 32u;
  for (uint k0 = 0u; k0 < pc.K; k0 += BK) {
    barrier();  // arow written / the previous slice consumed
    // A: BR rows x BK values as vec4s, f32 -> f16.
    for (uint i = lid; i < BR * (BK / 4u); i += WG) {
      const uint r = i / (BK / 4u), kk = 4u * (i % (BK / 4u));
      const bool ok = arow[r] != ROUTE_NONE && k0 + kk < pc.K;
      const f16vec4 h = f16vec4(ok ? a4[arow[r] + (k0 + kk) / 4u] : vec4(0.0));
      const uint at = r * KP + kk;
      as[at] = h.x, as[at + 1u] = h.y, as[at + 2u] = h.z, as[at + 3u] = h.w;
    }
    // Weights: BN rows x the slice's units, decoded.
    for (uint i = lid; i < BN * units; i += WG) {
      const uint c = i / units, u = k0 / 32u + i % units, n = n0 + c;
      const bool ok = n < pc.N && u < pc.K / 32u;
      stage_unit(TYPE0, 0u, ok, (wrow0 + n) * pc.rb0, u, k0, c);
      if (GATED == 1u) stage_unit(TYPE1, 1u, ok, (wrow0 + n) * pc.rb1, u, k0, c);
    }
    barrier();  // the slice is staged
    if (computes) {
      [[unroll]] for (uint kk = 0u; kk < BK; kk += 16u) {
        hl_cm_a am[MR];
        [[unroll]] for (uint i = 0u; i < MR; ++i) HL_CM_LOAD_A(am[i], as, 16u * i * KP + kk, HL_CM_ROW_MAJOR, KP);
        [[unroll]] for (uint j = 0u; j < MC; ++j) {
          hl_cm_b bm;
          HL_CM_LOAD_B(bm, ws0, (c0 + 16u * j) * KP + kk, HL_CM_COL_MAJOR, KP);
          [[unroll]] for (uint i = 0u; i < MR; ++i) acc[i * MC + j] = hl_cm_muladd(am[i], bm, acc[i * MC + j]);
          if (GATED == 1u) {
            HL_CM_LOAD_B(bm, ws1, (c0 + 16u * j) * KP + kk, HL_CM_COL_MAJOR, KP);
            [[unroll]] for (uint i = 0u; i < MR; ++i)
              acc[MR * MC + i * MC + j] = hl_cm_muladd(am[i], bm, acc[MR * MC + i * MC + j]);
          }
        }
      }
    }
  }

  // Epilogue, one 16 x 16 block at a time through this subgroup's scratch (gate and up side by side when GATED):
  // rows inside [p0, p1), columns < N.
  if (!computes) return;
  const uint sb = s * 256u * (GATED + 1u);
  [[unroll]] for (uint i = 0u; i < MR; ++i)
    [[unroll]] for (uint j = 0u; j < MC; ++j) {
      HL_CM_STORE(scratch, sb, acc[i * MC + j], HL_CM_ROW_MAJOR, 16u);
      if (GATED == 1u) HL_CM_STORE(scratch, sb + 256u, acc[MR * MC + i * MC + j], HL_CM_ROW_MAJOR, 16u);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      for (uint e = gl_SubgroupInvocationID; e < 256u; e += gl_SubgroupSize) {
        const uint r = 16u * i + e / 16u, n = n0 + c0 + 16u * j + e % 16u, pos = p0 + r;
        if (pos >= p1 || n >= pc.N) continue;
        float y = scratch[sb + e];
        if (GATED == 1u) y = y / (1.0 + exp(-y)) * scratch[sb + 256u + e];
        // Dense and gate/up: row pos (route_pack: h in packed order); down: the entry's own row.
        res[(MODE == 1u && GATED == 0u ? uint(rows[pos]) : pos) * pc.N + n] = y;
      }
      subgroupMemoryBarrierShared();
      subgroupBarrier();  // the scratch is read before the next block overwrites it
    }
}

#endif
