// ssm_scan (vulkan:chunked_coopmat): ssm_chunk_gemm.glsl's chunk products on cooperative matrices
// (VK_KHR_cooperative_matrix, 16x16x16 f16 x f16 + f32 over a subgroup; coopmat.glsl). Each BK-deep slice of
// both operands is rounded to f16 into shared memory; subgroup s computes the 16 x 32 strip (rows
// 16 (s / (BN/32)), columns 32 (s % (BN/32))) of the BM x BN tile, accumulated in f32; the accumulators go
// through shared memory (f32) to the same epilogue as the f32 kernel (Gamma mask, outputs). Strips
// with no outputs (above the diagonal of A and P, or past the chunk's last row) skip the products, and
// strips of the triangular P stop at their diagonal.
// The host sizes the workgroup as (BM/16) (BN/32) subgroups of the device's largest subgroup size, with full
// subgroups required, so every strip has its subgroup whatever the actual subgroup size; branches around
// cooperative-matrix operations are subgroup-uniform. Shared layouts (rows padded to 16-byte multiples, as the
// loads require): ls[m * AKP + k] (A row-major), rs[n * AKP + k] (B (k, n) column-major), cs[m * CP + n].
// Included by ssm_chunk_gemm_cm.comp and ssm_chunk_gemm_cm_emul.comp (HL_CM_EMULATE, for lavapipe).
#ifndef HL_SSM_CHUNK_GEMM_CM_GLSL
#define HL_SSM_CHUNK_GEMM_CM_GLSL
#include "coopmat.glsl"
const uint BK = 32u, AKP = BK + 8u;  // f16 per staged row: 80 bytes, banks shifted per row
#ifdef HL_CM_EMULATE
#define SSM_UNROLL [[dont_unroll]]  // lavapipe compiles the emulated kernel several times faster
#else
#define SSM_UNROLL [[unroll]]
#endif
#define SSM_TILE float16_t
#define SSM_LS_SIZE (BM * AKP)
#define SSM_RS_SIZE (BN * AKP)
#define SSM_STAGE_L(m, kk, x) ls[(m) * AKP + (kk)] = float16_t(x)
#define SSM_STAGE_R(kk, n, x) rs[(n) * AKP + (kk)] = float16_t(x)
#include "ssm_chunk_gemm.glsl"
const uint CP = BN + 4u;          // f32 per accumulator row
const uint SC = BN / 32u;         // strips per row block
const uint NS = (BM / 16u) * SC;  // strips per tile = subgroups that compute

shared float cs[BM * CP];

#ifdef HL_CM_EMULATE
const uint HL_CM_ID_ls = 0u, HL_CM_ID_rs = 1u;
float hl_cm_read(uint id, uint i) { return float(id == 0u ? ls[i] : rs[i]); }
#endif

void main() {
  if (!ssm_gemm_setup()) return;  // uniform per workgroup
  const uint s = gl_SubgroupID, r0 = 16u * (s / SC), c0 = 32u * (s % SC), rr = (m0 + r0) % C;
  const bool owns = s < NS, computes = owns && rr < nrows && (MODE != 0u || n0 + c0 <= rr + 15u);
  // P (MODE 2's left columns past d_k) is lower triangular: the strip's rows rr..rr+15 meet no reduction index
  // past kend (subgroup-uniform), so its products stop there.
  const uint kend = MODE == 2u ? pc.dk + rr + 16u : KD;
  hl_cm_acc x0 = hl_cm_fill(0.0);
  hl_cm_acc x1 = hl_cm_fill(0.0);
  for (uint k0 = 0u; k0 < KD; k0 += BK) {
    ssm_gemm_stage(k0);
    barrier();
    if (computes) {
      SSM_UNROLL for (uint kk = 0u; kk < BK && k0 + kk < kend; kk += HL_CM) {
        hl_cm_a am;
        hl_cm_b b0;
        hl_cm_b b1;  // all three loads issued before the products
        HL_CM_LOAD_A(am, ls, r0 * AKP + kk, HL_CM_ROW_MAJOR, AKP);
        HL_CM_LOAD_B(b0, rs, c0 * AKP + kk, HL_CM_COL_MAJOR, AKP);
        HL_CM_LOAD_B(b1, rs, (c0 + 16u) * AKP + kk, HL_CM_COL_MAJOR, AKP);
        x0 = hl_cm_muladd(am, b0, x0);
        x1 = hl_cm_muladd(am, b1, x1);
      }
    }
    barrier();  // the slice consumed
  }
  if (owns) {  // cs is read by no one before the barrier below
    HL_CM_STORE(cs, r0 * CP + c0, x0, HL_CM_ROW_MAJOR, CP);
    HL_CM_STORE(cs, r0 * CP + c0 + 16u, x1, HL_CM_ROW_MAJOR, CP);
  }
  barrier();
  for (uint i = gl_LocalInvocationID.x; i < BM * BN; i += WG) ssm_gemm_store(i / BN, i % BN, cs[i / BN * CP + i % BN]);
}

#endif
