// ssm_scan (vulkan:chunked_coopmat): ssm_chunk_state.comp's inter-chunk state pass with its two products on
// cooperative matrices (coopmat.glsl): sequential over the chunks of a pass, parallel over (value head, block
// of 16 value columns). The state block S[:, j0 : j0 + 16] stays f32 in shared memory across all chunks
// (read and written once); per chunk c (batch b = h * nch + c):
//   S_c -> scratch (f32, for the outputs) and an f16 copy (the product's operand)
//   V' = U - W S_c       subgroup s < C/16 owns V' rows 16s..: W in f16 slices of 32 columns, f32 accumulation;
//                        V' = U - acc in f32 (to scratch, for the outputs), and an f16 copy
//   S = e^{gamma_last} S_c + Kbar^T V'    the f32 state scaled in place, then loaded as the accumulator of
//                        its 16-row tiles (subgroup s: tiles s, s + NSG, ...), Kbar = diag(e^{gamma_last -
//                        gamma}) K in f16 slices of 32 rows, stored back: S itself never passes through f16.
// NSG subgroups of the device's largest subgroup size (full subgroups), NSG >= C/16. Shared layouts (rows
// padded to 16-byte multiples as the loads require): sS[i * CB + j] f32, sSh[i * SP + j] f16 (B, row-major),
// stg: W slice [r * WP + k] (A, row-major) or Kbar slice [r * KP + i] (A = Kbar^T: column-major),
// sacc[r * AP + j] f32, sV[r * SP + j] f16 (B, row-major). DK: a multiple of 16.
// Every staging loop has a constant trip count (SSM_FOR: unrolled where the matrices are real), so an invocation's
// global loads of a slice are in flight together: a loop bounded at run time waited a round trip per element.
#ifndef HL_SSM_CHUNK_STATE_CM_GLSL
#define HL_SSM_CHUNK_STATE_CM_GLSL
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;  // NSG * the largest subgroup size
layout(constant_id = 1) const uint NSG = 4;   // subgroups that compute, >= C / 16
layout(constant_id = 2) const uint C = 64;    // chunk length, a multiple of 16
layout(constant_id = 3) const uint DK = 128;  // key head dim, a multiple of 16
#include "common.glsl"
#include "coopmat.glsl"
const uint CB = 16u;                          // value columns per workgroup
const uint BK = 32u, WP = BK + 8u;            // W slices: 32 key columns
const uint RS = 32u, KP = DK + 8u;            // Kbar slices: 32 rows
const uint SP = CB + 8u, AP = CB + 4u;
const uint STG = C * WP > RS * KP ? C * WP : RS * KP;
#ifdef HL_CM_EMULATE
#define SSM_UNROLL [[dont_unroll]]  // lavapipe compiles the emulated kernel several times faster
#else
#define SSM_UNROLL [[unroll]]
#endif
// for (e = L; e < n; e += WG) with a constant count of trips (n a constant)
#define SSM_FOR(e, n) SSM_UNROLL for (uint e##_u = 0u, e = L; e##_u < ((n) + WG - 1u) / WG; ++e##_u, e += WG) if (e < (n))

layout(std430, binding = 1) readonly buffer Kb { float k[]; };
layout(std430, binding = 5) buffer State { float state[]; };       // [nv][DK * dv], S[i][j] at i * dv + j
layout(std430, binding = 7) readonly buffer Gamb { vec2 gam[]; };   // [b][C]: gamma = hi + lo
layout(std430, binding = 9) buffer UWb { float uw[]; };            // [b][C][dv + DK]: U | W
layout(std430, binding = 10) writeonly buffer Scb { float sc[]; };  // [b][DK][dv]
layout(push_constant) uniform Push { uint t0, T, nk, nv, dk, dv, nch, tiled; } pc;

shared float sS[DK * CB], sacc[C * AP], sdec[C];
shared float16_t sSh[DK * SP], sV[C * SP], stg[STG];

#ifdef HL_CM_EMULATE
const uint HL_CM_ID_stg = 0u, HL_CM_ID_sSh = 1u, HL_CM_ID_sV = 2u;
float hl_cm_read(uint id, uint i) { return float(id == 0u ? stg[i] : id == 1u ? sSh[i] : sV[i]); }
#endif

void main() {
  const uint blocks = (pc.dv + CB - 1u) / CB, grp = hl_group_index(), h = grp / blocks;
  if (h >= pc.nv) return;  // uniform per workgroup
  const uint j0 = grp % blocks * CB, L = gl_LocalInvocationID.x, s = gl_SubgroupID;
  const uint kcol = (pc.tiled != 0u ? h % pc.nk : h / (pc.nv / pc.nk)) * DK, ldk = pc.nk * DK, ldw = pc.dv + DK;
  const uint sbase = h * DK * pc.dv;
  SSM_FOR(e, DK * CB) {
    const uint i = e / CB, j = j0 + e % CB;
    sS[e] = j < pc.dv ? state[sbase + i * pc.dv + j] : 0.0;
  }

  for (uint c = 0u; c < pc.nch; ++c) {
    const uint b = h * pc.nch + c, row0 = pc.t0 + c * C, nrows = min(C, pc.T - row0);
    const vec2 glast = gam[b * C + C - 1u];  // rows past the end decay by e^0: the last real row's
    barrier();  // sS final for the previous chunk (and loaded); stg, sV consumed
    SSM_FOR(e, DK * CB) {
      const uint i = e / CB, jl = e % CB;
      sSh[i * SP + jl] = float16_t(sS[e]);
      if (j0 + jl < pc.dv) sc[(b * DK + i) * pc.dv + j0 + jl] = sS[e];
    }
    SSM_FOR(r, C) {
      const vec2 d = glast - gam[b * C + r];
      sdec[r] = exp(d.x + d.y);
    }

    // V' = U - W S_c
    hl_cm_acc acc = hl_cm_fill(0.0);
    for (uint i0 = 0u; i0 < DK; i0 += BK) {
      barrier();  // sSh written / the previous slice consumed
      SSM_FOR(e, C * BK) {
        const uint r = e / BK, kk = e % BK;
        stg[r * WP + kk] = float16_t(i0 + kk < DK && r < nrows ? uw[(b * C + r) * ldw + pc.dv + i0 + kk] : 0.0);
      }
      barrier();
      if (s < C / 16u && 16u * s < nrows)  // row tiles wholly in the padding: W = 0 there
        [[unroll]] for (uint kk = 0u; kk < BK && i0 + kk < DK; kk += HL_CM) {
          hl_cm_a am;
          hl_cm_b bm;
          HL_CM_LOAD_A(am, stg, 16u * s * WP + kk, HL_CM_ROW_MAJOR, WP);
          HL_CM_LOAD_B(bm, sSh, (i0 + kk) * SP, HL_CM_ROW_MAJOR, SP);
          acc = hl_cm_muladd(am, bm, acc);
        }
    }
    if (s < C / 16u) HL_CM_STORE(sacc, 16u * s * AP, acc, HL_CM_ROW_MAJOR, AP);
    const float lam = exp(glast.x + glast.y);
    barrier();  // sacc stored; every subgroup past its reads of sSh
    SSM_FOR(e, C * CB) {
      const uint r = e / CB, jl = e % CB, at = (b * C + r) * ldw + j0 + jl;
      const bool live = j0 + jl < pc.dv;
      const float vn = (live ? uw[at] : 0.0) - sacc[r * AP + jl];
      sV[r * SP + jl] = float16_t(vn);
      if (live) uw[at] = vn;
    }
    SSM_FOR(e, DK * CB) sS[e] *= lam;

    // S = e^{gamma_last} S_c + Kbar^T V' (padding rows have Kbar = 0)
    for (uint r0 = 0u; r0 < nrows; r0 += RS) {
      barrier();  // sV, scaled sS written / the previous slice consumed
      SSM_FOR(e, RS * DK) {
        const uint rr = e / DK, i = e % DK, r = r0 + rr;
        stg[rr * KP + i] = float16_t(r < nrows ? sdec[r] * k[(row0 + r) * ldk + kcol + i] : 0.0);
      }
      barrier();
      for (uint t = s; s < NSG && t < DK / 16u; t += NSG) {  // subgroup-uniform; spare subgroups (smaller
                                                            // subgroups than the largest) only stage
        hl_cm_acc st;
        HL_CM_LOAD_ACC(st, sS, 16u * t * CB, HL_CM_ROW_MAJOR, CB);
        [[unroll]] for (uint kk = 0u; kk < RS && r0 + kk < nrows; kk += HL_CM) {  // sV has C rows (C may be 16)
          hl_cm_a am;
          hl_cm_b bm;
          HL_CM_LOAD_A(am, stg, kk * KP + 16u * t, HL_CM_COL_MAJOR, KP);
          HL_CM_LOAD_B(bm, sV, (r0 + kk) * SP, HL_CM_ROW_MAJOR, SP);
          st = hl_cm_muladd(am, bm, st);
        }
        HL_CM_STORE(sS, 16u * t * CB, st, HL_CM_ROW_MAJOR, CB);
      }
    }
  }

  barrier();
  for (uint e = L; e < DK * CB; e += WG) {
    const uint i = e / CB, j = j0 + e % CB;
    if (j < pc.dv) state[sbase + i * pc.dv + j] = sS[e];
  }
}

#endif
