// ssm_scan (vulkan:chunked): the chunk-parallel products of SPEC 5 in f32 (operands, modes and epilogue:
// ssm_chunk_gemm.glsl). A workgroup computes a BM x BN tile; invocation (tx, ty) owns RM x RN outputs strided
// by the invocation grid (rows ty + i TM, columns tx + j TN: conflict-free shared reads). BK-wide k slices
// of both operands are staged in shared memory.
#version 450
layout(constant_id = 5) const uint RM = 4;  // WG = (BM / RM) * (BN / RN)
layout(constant_id = 6) const uint RN = 4;
const uint BK = 16;
#define SSM_TILE float  // [k][m], [k][n]; +1: conflict-free stores
#define SSM_LS_SIZE (BK * (BM + 1u))
#define SSM_RS_SIZE (BK * (BN + 1u))
#define SSM_STAGE_L(m, kk, x) ls[(kk) * (BM + 1u) + (m)] = (x)
#define SSM_STAGE_R(kk, n, x) rs[(kk) * (BN + 1u) + (n)] = (x)
#include "ssm_chunk_gemm.glsl"
const uint TM = BM / RM, TN = BN / RN;

void main() {
  if (!ssm_gemm_setup()) return;  // uniform per workgroup
  const uint L = gl_LocalInvocationID.x, tx = L % TN, ty = L / TN;
  float acc[RM][RN];
  [[unroll]] for (uint i = 0u; i < RM; ++i)
    [[unroll]] for (uint j = 0u; j < RN; ++j) acc[i][j] = 0.0;
  for (uint k0 = 0u; k0 < KD; k0 += BK) {
    ssm_gemm_stage(k0);
    barrier();
    [[unroll]] for (uint kk = 0u; kk < BK; ++kk) {
      float a[RM], x[RN];
      [[unroll]] for (uint i = 0u; i < RM; ++i) a[i] = ls[kk * (BM + 1u) + ty + i * TM];
      [[unroll]] for (uint j = 0u; j < RN; ++j) x[j] = rs[kk * (BN + 1u) + tx + j * TN];
      [[unroll]] for (uint i = 0u; i < RM; ++i)
        [[unroll]] for (uint j = 0u; j < RN; ++j) acc[i][j] += a[i] * x[j];
    }
    barrier();
  }
  [[unroll]] for (uint i = 0u; i < RM; ++i)
    [[unroll]] for (uint j = 0u; j < RN; ++j) ssm_gemm_store(ty + i * TM, tx + j * TN, acc[i][j]);
}
