// ssm_scan (vulkan:chunked): the inter-chunk state pass of SPEC 5, sequential over the chunks of a pass,
// parallel over (value head, block of CB value columns): column j of S only ever meets column j of V',
// so a workgroup keeps S[:, j0 : j0 + CB] in registers (mirrored to shared memory for the products)
// across all chunks and reads and writes it once. Per chunk c (batch b = h * nch + c):
//   S_c (the state at the chunk's start) -> scratch, for the outputs (ssm_chunk_gemm.comp MODE 2)
//   V' = U - W S_c                              (U, W from ssm_chunk_wy.comp; V' overwrites U)
//   S  = e^{gamma_last} S_c + Kbar^T V',  Kbar = diag(e^{gamma_last - gamma}) K
// Invocation (tx, ty) owns columns tx RN + jn (jn < RN) and rows ty MV + m of V' (ty MS + m of S): contiguous, so its
// shared-memory operands are read several at a time (one wide load where they are 8 or 16 bytes). W and Kbar
// come through shared memory in slices of BK (the host picks the deepest that fits: each slice is a round trip to
// memory that the chunk waits for), each read along its contiguous index.
#version 450
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint CB = 32;   // value columns per workgroup, a power of two
layout(constant_id = 2) const uint C = 64;    // chunk length, a multiple of BK
layout(constant_id = 3) const uint DK = 128;  // key head dim
layout(constant_id = 4) const uint RN = 4;    // columns per invocation, divides CB
layout(constant_id = 5) const uint BK = 16;   // depth of a staged slice: divides C, a power of two
// Diagnosis only (tunable ssm_scan.chunked.diag, results wrong): 1 stages zeros for W (no loads), 2 zeros for Kbar,
// 4 skips both products' multiply-adds, 8 skips the U loads and the S_c / V' stores, 16 drops the barriers around
// each staged slice: what each part of a chunk costs
// (`experiment --time-failing`).
layout(constant_id = 6) const uint DIAG = 0;
#include "common.glsl"
const uint CL = CB / RN, NR = WG / CL;  // column lanes, row lanes
const uint MV = (C + NR - 1u) / NR, MS = (DK + NR - 1u) / NR;
const uint DKP = (DK + BK - 1u) / BK * BK;  // rows of sS: whole k slices, zeros past DK
const uint SW = C + 2u;  // row stride of a staged W slice (+2: 8-byte aligned rows, 2-way conflicts on its stores)

layout(std430, binding = 1) readonly buffer Kb { float k[]; };
layout(std430, binding = 5) buffer State { float state[]; };       // [nv][DK * dv], S[i][j] at i * dv + j
layout(std430, binding = 7) readonly buffer Gamb { vec2 gam[]; };   // [b][C]: gamma = hi + lo
layout(std430, binding = 9) buffer UWb { float uw[]; };            // [b][C][dv + DK]: U | W
layout(std430, binding = 10) writeonly buffer Scb { float sc[]; };  // [b][DK][dv]
layout(push_constant) uniform Push { uint t0, T, nk, nv, dk, dv, nch, tiled; } pc;

shared float sS[DKP * CB], sV[C * CB], stg[BK * (SW > DK ? SW : DK)], sdec[C];

void main() {
  const uint blocks = (pc.dv + CB - 1u) / CB, grp = hl_group_index(), h = grp / blocks;
  if (h >= pc.nv) return;  // uniform per workgroup
  const uint j0 = grp % blocks * CB, L = gl_LocalInvocationID.x, tx = L % CL, ty = L / CL;
  const uint kcol = (pc.tiled != 0u ? h % pc.nk : h / (pc.nv / pc.nk)) * DK, ldk = pc.nk * DK, ldw = pc.dv + DK;
  const uint sbase = h * DK * pc.dv;

  float s[MS][RN];
  [[unroll]] for (uint m = 0u; m < MS; ++m)
    [[unroll]] for (uint jn = 0u; jn < RN; ++jn) {
      const uint i = ty * MS + m, j = j0 + tx * RN + jn;
      s[m][jn] = i < DK && j < pc.dv ? state[sbase + i * pc.dv + j] : 0.0;
    }
  for (uint e = DK * CB + L; e < DKP * CB; e += WG) sS[e] = 0.0;

  for (uint c = 0u; c < pc.nch; ++c) {
    const uint b = h * pc.nch + c, row0 = pc.t0 + c * C, nrows = min(C, pc.T - row0);
    const vec2 glast = gam[b * C + C - 1u];  // rows past the end decay by e^0: the last real row's
    [[unroll]] for (uint m = 0u; m < MS; ++m)
      [[unroll]] for (uint jn = 0u; jn < RN; ++jn) {
        const uint i = ty * MS + m, jl = tx * RN + jn;
        if (i < DK) sS[i * CB + jl] = s[m][jn];
        if (i < DK && j0 + jl < pc.dv && (DIAG & 8u) == 0u) sc[(b * DK + i) * pc.dv + j0 + jl] = s[m][jn];
      }
    for (uint r = L; r < C; r += WG) {
      const vec2 d = glast - gam[b * C + r];
      sdec[r] = exp(d.x + d.y);
    }
    barrier();

    // V' = U - W S_c
    float acc[MV][RN];
    [[unroll]] for (uint m = 0u; m < MV; ++m)
      [[unroll]] for (uint jn = 0u; jn < RN; ++jn) acc[m][jn] = 0.0;
    for (uint i0 = 0u; i0 < DK; i0 += BK) {
      [[unroll]] for (uint u = 0u; u < (C * BK + WG - 1u) / WG; ++u) {
        const uint e = u * WG + L, r = e / BK, kk = e % BK;
        if (e < C * BK)
          stg[kk * SW + r] = (DIAG & 1u) == 0u && i0 + kk < DK && r < nrows ? uw[(b * C + r) * ldw + pc.dv + i0 + kk] : 0.0;
      }
      if ((DIAG & 16u) == 0u) barrier();
      [[unroll]] for (uint kk = 0u; kk < BK; ++kk) {
        float a[MV], x[RN];
        [[unroll]] for (uint m = 0u; m < MV; ++m) a[m] = stg[kk * SW + min(ty * MV + m, C - 1u)];
        [[unroll]] for (uint jn = 0u; jn < RN; ++jn) x[jn] = sS[(i0 + kk) * CB + tx * RN + jn];
        [[unroll]] for (uint m = 0u; m < MV; ++m)
          if (ty * MV + m < nrows && (DIAG & 4u) == 0u)  // padding rows (a short last chunk) stay 0
            [[unroll]] for (uint jn = 0u; jn < RN; ++jn) acc[m][jn] += a[m] * x[jn];
      }
      if ((DIAG & 16u) == 0u) barrier();
    }
    [[unroll]] for (uint m = 0u; m < MV; ++m)
      [[unroll]] for (uint jn = 0u; jn < RN; ++jn) {
        const uint r = ty * MV + m, jl = tx * RN + jn, at = (b * C + r) * ldw + j0 + jl;
        if (r >= C) continue;
        const bool live = j0 + jl < pc.dv;
        const float vn = (live && (DIAG & 8u) == 0u ? uw[at] : 0.0) - acc[m][jn];
        sV[r * CB + jl] = vn;
        if (live && (DIAG & 8u) == 0u) uw[at] = vn;
      }
    barrier();

    // S = e^{gamma_last} S_c + Kbar^T V'
    float upd[MS][RN];
    [[unroll]] for (uint m = 0u; m < MS; ++m)
      [[unroll]] for (uint jn = 0u; jn < RN; ++jn) upd[m][jn] = 0.0;
    for (uint r0 = 0u; r0 < nrows; r0 += BK) {  // padding rows have Kbar = 0
      [[unroll]] for (uint u = 0u; u < (BK * DK + WG - 1u) / WG; ++u) {
        const uint e = u * WG + L, kk = e / DK, i = e % DK, r = r0 + kk;
        if (e < BK * DK) stg[kk * DK + i] = r < nrows && (DIAG & 2u) == 0u ? sdec[r] * k[(row0 + r) * ldk + kcol + i] : 0.0;
      }
      if ((DIAG & 16u) == 0u) barrier();
      [[unroll]] for (uint kk = 0u; kk < BK; ++kk) {
        float a[MS], x[RN];
        [[unroll]] for (uint m = 0u; m < MS; ++m) a[m] = stg[kk * DK + min(ty * MS + m, DK - 1u)];
        [[unroll]] for (uint jn = 0u; jn < RN; ++jn) x[jn] = sV[(r0 + kk) * CB + tx * RN + jn];
        if ((DIAG & 4u) == 0u)
          [[unroll]] for (uint m = 0u; m < MS; ++m)
            [[unroll]] for (uint jn = 0u; jn < RN; ++jn) upd[m][jn] += a[m] * x[jn];
      }
      if ((DIAG & 16u) == 0u) barrier();
    }
    const float lam = exp(glast.x + glast.y);
    [[unroll]] for (uint m = 0u; m < MS; ++m)
      [[unroll]] for (uint jn = 0u; jn < RN; ++jn) s[m][jn] = lam * s[m][jn] + upd[m][jn];
  }

  [[unroll]] for (uint m = 0u; m < MS; ++m)
    [[unroll]] for (uint jn = 0u; jn < RN; ++jn) {
      const uint i = ty * MS + m, j = j0 + tx * RN + jn;
      if (i < DK && j < pc.dv) state[sbase + i * pc.dv + j] = s[m][jn];
    }
}
