// ssm_scan (vulkan:chunked, vulkan:chunked_coopmat): the chunk-parallel products of SPEC 5 as one batched
// tiled GEMM, out[m][n] = sum_k L(m, k) R(k, n), per batch b = h * nch + c (value head h, chunk c of this
// pass). This file holds what the f32 kernel (ssm_chunk_gemm.comp) and the cooperative-matrix one
// (ssm_chunk_gemm_cm.glsl) share: operands, tile placement, the gamma prologue, slice staging, the epilogue.
// MODE picks operands and epilogue (gamma: the chunk's inclusive cumulative log decay):
//   0  rows [0, C): A = (beta K) K^T * Gamma, strictly lower; rows [C, 2C): P = Q K^T * Gamma, lower.
//      Computes gamma from g (tile (0, 0) stores it for the other stages) as an unevaluated sum hi + lo
//      (compensated): a plain f32 cumsum reaches |gamma| ~ 100 with an absolute error ~ulp(100) = 8e-6,
//      which becomes the relative error of every Gamma[r][s] = e^{gamma_r - gamma_s}, even of neighbours;
//      with hi + lo the differences keep f32 accuracy, as the recurrence's e^{g_t} do.
//   2  o = [e^gamma Q | P] [S_c ; V'] = diag(e^gamma) Q S_c + P V' (S_c, V' from ssm_chunk_state.comp).
// ([U | W] between them: ssm_chunk_wy.comp's forward substitution.)
// A workgroup computes a BM x BN tile; BK-wide k slices of both operands are staged in shared memory by
// ssm_gemm_stage through the including kernel's SSM_STAGE_L(m, kk, x) and SSM_STAGE_R(kk, n, x) (defined
// with SSM_TILE, SSM_LS_SIZE, SSM_RS_SIZE and const uint BK before the #include). Rows past
// the end of the sequence are zero padding (g = 0, beta = 0).
#ifndef HL_SSM_CHUNK_GEMM_GLSL
#define HL_SSM_CHUNK_GEMM_GLSL
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;  // invocations: the host sets it from the tile
layout(constant_id = 1) const uint MODE = 0;
layout(constant_id = 2) const uint C = 64;    // chunk length, a power of two
layout(constant_id = 3) const uint BM = 64;   // divides C
layout(constant_id = 4) const uint BN = 64;
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#ifndef SSM_UNROLL
#define SSM_UNROLL [[unroll]]  // the staging loops (an including kernel may say otherwise)
#endif

layout(std430, binding = 0) readonly buffer Qb { float q[]; };
layout(std430, binding = 1) readonly buffer Kb { float k[]; };
layout(std430, binding = 2) readonly buffer Vb { float v[]; };
layout(std430, binding = 3) readonly buffer Betab { float beta[]; };
layout(std430, binding = 4) readonly buffer Gb { float g[]; };
layout(std430, binding = 6) writeonly buffer Ob { float o[]; };
layout(std430, binding = 7) buffer Gamb { vec2 gam[]; };           // [b][C]: gamma = hi + lo
layout(std430, binding = 8) buffer APb { float ap[]; };            // [b][2C][C]: A, then P
layout(std430, binding = 9) readonly buffer UWb { float uw[]; };  // [b][C][dv + dk]: V' (U until the state pass) | W
layout(std430, binding = 10) readonly buffer Scb { float sc[]; };  // [b][dk][dv]: state at chunk start
layout(push_constant) uniform Push {
  uint t0, T;       // first token of this pass, tokens in all
  uint nk, nv, dk, dv;
  uint nch;         // chunks in this pass
  uint tiled;       // value head h reads key head h % nk, else h / (nv / nk)
} pc;

shared float shi[C], slo[C], sexp[C], sbeta[C], sg[C];

uint b, h, row0, nrows, kcol, ldk, ldv;
uint m0, n0;  // this workgroup's tile
uint N;       // output columns
uint KD;      // reduction extent (0: nothing to reduce)

float left(uint m, uint kk) {
  if (MODE == 0u) {  // K for A's rows, Q for P's
    const uint r = m % C, i = (row0 + r) * ldk + kcol + kk;
    if (r >= nrows || kk >= pc.dk) return 0.0;
    return m < C ? k[i] : q[i];
  }
  if (kk < pc.dk) return m < nrows ? sexp[m] * q[(row0 + m) * ldk + kcol + kk] : 0.0;
  return ap[(b * 2u * C + C + m) * C + kk - pc.dk];  // P
}

float right(uint kk, uint n) {
  if (MODE == 0u) return n < nrows && kk < pc.dk ? k[(row0 + n) * ldk + kcol + kk] : 0.0;  // K^T
  if (kk < pc.dk) return sc[(b * pc.dk + kk) * pc.dv + n];
  return uw[(b * C + kk - pc.dk) * (pc.dv + pc.dk) + n];  // V' (rows < nrows)
}

// Places this workgroup's tile (sets b, h, row0, ..., m0, n0, N, KD), loads the chunk's gamma, e^gamma and
// beta into shared memory (MODE 0 computes gamma) and ends with a barrier. False (uniform per workgroup):
// no outputs here.
bool ssm_gemm_setup() {
  N = MODE == 0u ? C : pc.dv;
  const uint tilesN = (N + BN - 1u) / BN, tiles = (MODE == 0u ? 2u : 1u) * (C / BM) * tilesN;
  const uint idx = hl_group_index();
  b = idx / tiles;
  if (b >= pc.nv * pc.nch) return false;
  m0 = idx % tiles / tilesN * BM, n0 = idx % tiles % tilesN * BN;
  h = b / pc.nch;
  row0 = pc.t0 + b % pc.nch * C;
  nrows = min(C, pc.T - row0);
  if (MODE == 2u && m0 >= nrows) return false;  // no outputs
  kcol = (pc.tiled != 0u ? h % pc.nk : h / (pc.nv / pc.nk)) * pc.dk, ldk = pc.nk * pc.dk, ldv = pc.nv * pc.dv;

  if (MODE == 0u) {  // the chunk's g in shared memory first: its loads all in flight at once
    for (uint r = gl_LocalInvocationID.x; r < C; r += WG) sg[r] = r < nrows ? g[(row0 + r) * pc.nv + h] : 0.0;
    barrier();
  }
  for (uint r = gl_LocalInvocationID.x; r < C; r += WG) {
    precise vec2 x = vec2(0.0);
    if (MODE == 0u) {  // in sequence order, each rounding error of hi kept in lo (TwoSum)
      for (uint s = 0u; s <= r && s < nrows; ++s) {
        precise const float a = sg[s], sum = x.x + a, bv = sum - x.x;
        x.y += (x.x - (sum - bv)) + (a - bv);
        x.x = sum;
      }
      if (m0 == 0u && n0 == 0u) gam[b * C + r] = x;
    } else {
      x = gam[b * C + r];
    }
    shi[r] = x.x, slo[r] = x.y, sexp[r] = exp(x.x + x.y), sbeta[r] = r < nrows ? beta[(row0 + r) * pc.nv + h] : 0.0;
  }
  barrier();

  // The reduction's extent: P is lower triangular and rows past nrows are zero, so tiles above the
  // diagonal or in the padding (a short last chunk) skip it.
  const uint rows_end = min(m0 % C + BM, nrows);
  const bool live = m0 % C < nrows && (MODE != 0u || n0 < rows_end);
  KD = !live ? 0u : MODE == 0u ? pc.dk : pc.dk + rows_end;
  return true;
}

// The staged slices, in the including kernel's type and layout: SSM_TILE ls[SSM_LS_SIZE], rs[SSM_RS_SIZE].
shared SSM_TILE ls[SSM_LS_SIZE], rs[SSM_RS_SIZE];

// Stages the BK-deep slice from k0 of both operands (zeros past KD and N), each read along its contiguous
// index: L along k; R along k (MODE 0: K^T) or n. BK: a constant of the including kernel.
void ssm_gemm_stage(uint k0) {
  const uint L = gl_LocalInvocationID.x;
  SSM_UNROLL for (uint u = 0u; u < (BM * BK + WG - 1u) / WG; ++u) {
    const uint e = u * WG + L, m = e / BK, kk = e % BK;
    if (e < BM * BK) SSM_STAGE_L(m, kk, k0 + kk < KD ? left(m0 + m, k0 + kk) : 0.0);
  }
  SSM_UNROLL for (uint u = 0u; u < (BN * BK + WG - 1u) / WG; ++u) {
    const uint e = u * WG + L, n = MODE == 0u ? e / BK : e % BN, kk = MODE == 0u ? e % BK : e / BN;
    if (e < BN * BK) SSM_STAGE_R(kk, n, k0 + kk < KD && n0 + n < N ? right(k0 + kk, n0 + n) : 0.0);
  }
}

// Output (m, n) of the tile (tile-relative) with its sum x.
void ssm_gemm_store(uint mt, uint nt, float x) {
  const uint m = m0 + mt, n = n0 + nt;
  if (n >= N) return;
  if (MODE == 0u) {  // Gamma from differences of gamma (never e^-gamma); masked entries never exp'd
    const uint r = m % C;
    const float gd = (shi[r] - shi[n]) + (slo[r] - slo[n]);
    float y = 0.0;
    if (m < C && n < r) y = sbeta[r] * x * exp(gd);
    if (m >= C && n <= r) y = x * exp(gd);
    ap[(b * 2u * C + m) * C + n] = y;
  } else if (m < nrows) {
    o[(row0 + m) * ldv + h * pc.dv + n] = x;
  }
}

#endif
