// moe_experts (vulkan:route_pack_coopmat), stage 4: route_gemm.comp's grouped expert GEMM on cooperative
// matrices (VK_KHR_cooperative_matrix, 16x16x16 f16 x f16 + f32 over a subgroup; coopmat.glsl).
// Same work split as route_gemm.comp (route_tile in route_gemm.glsl: row tile, expert, packed rows [p0, p1),
// columns [n0, n0 + BN)). Each BK-deep slice of the gathered A rows and of the BN weight rows is converted to
// f16 into shared memory (f32 weights: rounded; ggml blocks: decoded as in route_gemm.comp, then rounded), and
// subgroup s computes the 16 x 32 strip (rows 16 (s / (BN/32)), columns 32 (s % (BN/32))) of the BM x BN
// tile: one A matrix and two B matrices (per weight: gate and up when GATED) per 16 of depth, accumulated in
// f32. At the end the accumulators go through shared memory (f32) to the epilogue (SwiGLU, or the per-entry
// down rows), which writes only rows inside the expert's range and columns < N.
// The host sizes the workgroup as (BM/16) (BN/32) subgroups of the device's largest subgroup size, with full
// subgroups required, so every strip has its subgroup whatever the actual subgroup size (spare subgroups only
// stage slices and run the epilogue); branches around cooperative-matrix operations are subgroup-uniform.
// Shared layouts (strides padded so that each row starts on 16 bytes, as the loads require):
//   as[r * AKP + k]  A slice, row-major: the A matrix of rows r0.. is loaded row-major with stride AKP;
//   ws[c * AKP + k]  weight row c (output column): B (k, c) column-major with stride AKP;
//   cs[r * CP + c]   accumulators, row-major.
// Included by route_gemm_cm.comp (cooperative matrices) and route_gemm_cm_emul.comp (HL_CM_EMULATE: the same
// kernel with every matrix held whole by each invocation, for checking the tiling on devices without them).
#ifndef HL_ROUTE_GEMM_CM_GLSL
#define HL_ROUTE_GEMM_CM_GLSL
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;   // (BM / 16) * (BN / 32) * the largest subgroup size
layout(constant_id = 1) const uint BM = 32;    // packed rows per tile (multiple of 16)
layout(constant_id = 2) const uint BN = 64;    // output columns per tile (multiple of 32)
layout(constant_id = 3) const uint BK = 32;    // reduction depth per shared slice (multiple of 16; 128 if QUANT)
layout(constant_id = 4) const uint GATED = 1;
layout(constant_id = 5) const uint QUANT = 0;  // 1: ggml blocks (BK must be 128)
layout(constant_id = 6) const uint TYPE0 = 12; // ggml type ids of w0 and w1 (QUANT == 1)
layout(constant_id = 7) const uint TYPE1 = 12;
#include "common.glsl"
#include "coopmat.glsl"

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

const uint AKP = BK + 8u;         // f16 elements per staged row: 16-byte aligned rows, banks shifted per row
const uint CP = BN + 4u;          // f32 elements per accumulator row
const uint SC = BN / 32u;         // strips per row block
const uint NS = (BM / 16u) * SC;  // strips per tile = subgroups that compute

shared float16_t as[BM * AKP];
shared float16_t ws0[BN * AKP];
shared float16_t ws1[BN * AKP];
shared float cs0[BM * CP];
shared float cs1[BM * CP];
shared uint arow[BM];  // offset of each tile row in a (ROUTE_NONE past the expert's rows)

#ifdef HL_CM_EMULATE
const uint HL_CM_ID_as = 0u, HL_CM_ID_ws0 = 1u, HL_CM_ID_ws1 = 2u;
float hl_cm_read(uint id, uint i) { return float(id == 0u ? as[i] : id == 1u ? ws0[i] : ws1[i]); }
#endif

// Decoded weights rounded to f16 into the tiles.
#define ROUTE_STAGE(buf, c, kk, v) \
  if ((buf) == 0u) ws0[(c) * AKP + (kk)] = float16_t(v); \
  else ws1[(c) * AKP + (kk)] = float16_t(v)
#include "route_gemm.glsl"

void main() {
  uint e, p0, p1, n0;
  if (!route_tile(e, p0, p1, n0)) return;  // uniform per workgroup: past the packed tiles
  const uint lid = gl_LocalInvocationID.x;
  const uint wbase = e * pc.N;  // this expert's first weight row

  // This subgroup's strip; `computes` is uniform within the subgroup (strips wholly past the expert's rows
  // skip the products: their accumulators stay zero and the epilogue writes none of their rows).
  const uint s = gl_SubgroupID, r0 = 16u * (s / SC), c0 = 32u * (s % SC);
  const bool owns = s < NS, computes = owns && p0 + r0 < p1;
  hl_cm_acc g0 = hl_cm_fill(0.0);
  hl_cm_acc g1 = hl_cm_fill(0.0);
  hl_cm_acc u0 = hl_cm_fill(0.0);
  hl_cm_acc u1 = hl_cm_fill(0.0);
  for (uint k0 = 0u; k0 < pc.K; k0 += BK) {
    barrier();  // arow written / the previous slice consumed
    for (uint i = lid; i < BM * BK; i += WG) {
      const uint r = i / BK, kk = i % BK, kg = k0 + kk;
      as[r * AKP + kk] = float16_t(arow[r] != ROUTE_NONE && kg < pc.K ? a[arow[r] + kg] : 0.0);
    }
    if (QUANT == 0u) {
      for (uint i = lid; i < BN * BK; i += WG) {
        const uint c = i / BK, kk = i % BK, kg = k0 + kk, n = n0 + c;
        const bool ok = n < pc.N && kg < pc.K;
        const uint wi = (wbase + n) * pc.K + kg;
        ws0[c * AKP + kk] = float16_t(ok ? uintBitsToFloat(w0[wi]) : 0.0);
        if (GATED == 1u) ws1[c * AKP + kk] = float16_t(ok ? uintBitsToFloat(w1[wi]) : 0.0);
      }
    } else {  // units 4 * (k0 / 128) + 0..3 of each row
      for (uint i = lid; i < BN * 4u; i += WG) {
        const uint c = i / 4u, u = k0 / 32u + i % 4u, n = n0 + c;
        const bool ok = n < pc.N && u < pc.K / 32u;
        route_stage_unit(TYPE0, 0u, ok, (wbase + n) * pc.rb0, u, k0, c);
        if (GATED == 1u) route_stage_unit(TYPE1, 1u, ok, (wbase + n) * pc.rb1, u, k0, c);
      }
    }
    barrier();  // the slice is staged
    if (computes) {
      for (uint kk = 0u; kk < BK; kk += HL_CM) {
        hl_cm_a am;
        hl_cm_b bm;
        HL_CM_LOAD_A(am, as, r0 * AKP + kk, HL_CM_ROW_MAJOR, AKP);
        HL_CM_LOAD_B(bm, ws0, c0 * AKP + kk, HL_CM_COL_MAJOR, AKP);
        g0 = hl_cm_muladd(am, bm, g0);
        HL_CM_LOAD_B(bm, ws0, (c0 + 16u) * AKP + kk, HL_CM_COL_MAJOR, AKP);
        g1 = hl_cm_muladd(am, bm, g1);
        if (GATED == 1u) {
          HL_CM_LOAD_B(bm, ws1, c0 * AKP + kk, HL_CM_COL_MAJOR, AKP);
          u0 = hl_cm_muladd(am, bm, u0);
          HL_CM_LOAD_B(bm, ws1, (c0 + 16u) * AKP + kk, HL_CM_COL_MAJOR, AKP);
          u1 = hl_cm_muladd(am, bm, u1);
        }
      }
    }
  }

  // cs0/cs1 are read by no one during the loop, so no barrier is needed before these stores.
  if (owns) {
    HL_CM_STORE(cs0, r0 * CP + c0, g0, HL_CM_ROW_MAJOR, CP);
    HL_CM_STORE(cs0, r0 * CP + c0 + 16u, g1, HL_CM_ROW_MAJOR, CP);
    if (GATED == 1u) {
      HL_CM_STORE(cs1, r0 * CP + c0, u0, HL_CM_ROW_MAJOR, CP);
      HL_CM_STORE(cs1, r0 * CP + c0 + 16u, u1, HL_CM_ROW_MAJOR, CP);
    }
  }
  barrier();  // every strip stored
  for (uint i = lid; i < BM * BN; i += WG) {
    const uint r = i / BN, c = i % BN, pos = p0 + r, n = n0 + c;
    if (pos >= p1 || n >= pc.N) continue;
    const float v = cs0[r * CP + c];
    res[(GATED == 1u ? pos : uint(rows[pos])) * pc.N + n] = GATED == 1u ? v / (1.0 + exp(-v)) * cs1[r * CP + c] : v;
  }
}

#endif
