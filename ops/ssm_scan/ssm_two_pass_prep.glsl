// ssm_scan vulkan:chunked_two_pass, pass 1 of 2: what each chunk needs that does not depend on the carried state,
// every chunk of the pass at once (a workgroup per (value head h, chunk c), batch b = h * nch + c), SPEC 5 with
// C = 64 (compile-time: the block loops and the shared tiles are sized for it):
//   gamma (the inclusive cumsum of g, f32, in row order as the reference) -> gam[b]
//   K K^T and Q K^T on cooperative matrices (their lower 16 x 16 blocks only; K and Q staged as f16 in 32-wide pieces)
//   A = (beta_i k_i.k_j e^{gamma_i - gamma_j}, j < i) -> shared f16;  P = (q_i.k_j e^{gamma_i - gamma_j}, j <= i) -> P[b]
//   T = (I + A)^-1: its 16 x 16 diagonal blocks by forward substitution in f32, the blocks below on matrices
//   [U | -W] = T [beta V | -beta e^gamma K] on cooperative matrices -> U[b] (f32), Wn[b] (f16)
//   Qbar = e^gamma Q, Kbar = e^{gamma_last - gamma} K -> Qb[b], Kb[b] (f16), written as K and Q are staged
// Rows past T (the last chunk's padding) read as zeros: beta = 0 and K = V = 0 there, so they add nothing.
// NSG subgroups of the device's largest subgroup size compute (full subgroups; spare ones only stage); the workgroup
// has at least C invocations (one per column of T's diagonal blocks). d_k and d_v: multiples of 32, d_k at most 128.
// Memory moves 4 values at a time: q, k, v read as vec4, every f16 array (shared or not) an array of f16vec4, so the
// matrix loads and stores move whole vectors (offsets and strides in 4-value units, each a multiple of 16 bytes).
#ifndef HL_SSM_TWO_PASS_PREP_GLSL
#define HL_SSM_TWO_PASS_PREP_GLSL
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;  // max(NSG * the largest subgroup size, C)
layout(constant_id = 1) const uint DK = 128;
layout(constant_id = 2) const uint DV = 128;
layout(constant_id = 3) const uint KW = 32;  // columns per staged piece: 32 or 64 (dividing d_k)
// 1: each piece's K and Q and each round's right-hand sides loaded into registers a phase ahead (the next piece's under
// this piece's products, the first round's under the inverse), not after the barrier that stages them
layout(constant_id = 4) const uint PREFETCH = 1;
#include "common.glsl"
#define HL_CM_VEC 4u
#include "coopmat.glsl"
#ifdef HL_CM_EMULATE
#define SSM_UNROLL [[dont_unroll]]  // lavapipe compiles the emulated kernel much faster rolled
#else
#define SSM_UNROLL [[unroll]]
#endif
const uint C = 64u, NSG = 4u;
const uint KWP = KW + 8u, NB = KW / 16u;  // staged rows padded to 16-byte multiples; 16-column blocks per piece
const uint CP = C + 8u, QOFF = C * KWP;   // Q's half of skq
// for (e = L; e < n; e += WG) with a constant count of trips
#define SSM_FOR(e, n) SSM_UNROLL for (uint e##_u = 0u, e = L; e##_u < ((n) + WG - 1u) / WG; ++e##_u, e += WG) if (e < (n))
#define V4(x) ((x) / 4u)  // an f16vec4 array's index of element x (a multiple of 4)
// Per-invocation vec4s of a K / Q piece (each) and of a round's right-hand sides, and their most (WG >= C = 64).
const uint NKQ = C * KW / 4u, NRH = 2u * C * KW / 4u, TKQ = (NKQ + WG - 1u) / WG, TRH = (NRH + WG - 1u) / WG;
const uint TKQ_MAX = 16u, TRH_MAX = 32u;

layout(std430, binding = 0) restrict readonly buffer Qb_ { vec4 q[]; };
layout(std430, binding = 1) restrict readonly buffer Kb_ { vec4 k[]; };
layout(std430, binding = 2) restrict readonly buffer Vb_ { vec4 v[]; };
layout(std430, binding = 3) restrict readonly buffer Bb_ { float beta[]; };
layout(std430, binding = 4) restrict readonly buffer Gb_ { float g[]; };
layout(std430, binding = 5) restrict writeonly buffer Gam_ { float gam[]; };    // [b][C]
layout(std430, binding = 6) restrict writeonly buffer Wn_ { f16vec4 wn[]; };  // [b][C][DK]: -W
layout(std430, binding = 7) restrict writeonly buffer U_ { float u[]; };      // [b][C][DV]
layout(std430, binding = 8) restrict writeonly buffer Qbar_ { f16vec4 qbar[]; };  // [b][C][DK]
layout(std430, binding = 9) restrict writeonly buffer Kbar_ { f16vec4 kbar[]; };  // [b][C][DK]
layout(std430, binding = 10) restrict writeonly buffer P_ { f16vec4 pm[]; };  // [b][C][C], blocks on and below the diagonal
layout(push_constant) uniform Push { uint t0, T, nk, nv, nch, tiled; } pc;

shared float sg[C], sbeta[C], sdq[C], sdk[C];  // gamma, beta, e^gamma, e^{gamma_last - gamma}
shared f16vec4 skq[2u * C * KWP / 4u];  // pieces of K (first half) and Q (second); T's blocks; the right-hand sides
shared f16vec4 sa[C * CP / 4u];          // A (strictly lower), then T
shared float scr[NSG * 256u];            // a 16 x 16 block per subgroup; T's diagonal blocks in f32

#ifdef HL_CM_EMULATE
const uint HL_CM_ID_skq = 0u, HL_CM_ID_sa = 1u, HL_CM_ID_wn = 2u;
float hl_cm_read(uint id, uint i) { return float(id == 0u ? skq[i / 4u][i % 4u] : sa[i / 4u][i % 4u]); }
void hl_cm_write(uint id, uint i, float16_t x) {
  if (id == 0u) skq[i / 4u][i % 4u] = x;
  else wn[i / 4u][i % 4u] = x;
}
#endif

// Lower 16 x 16 block idx (0..9) of a 64 x 64 matrix: block row and column.
uvec2 lower_block(uint idx) {
  const uint rb = idx >= 6u ? 3u : idx >= 3u ? 2u : idx >= 1u ? 1u : 0u;
  return uvec2(rb, idx - rb * (rb + 1u) / 2u);
}

void main() {
  const uint b = hl_group_index(), h = b / pc.nch, c = b % pc.nch;
  if (h >= pc.nv) return;  // uniform per workgroup
  const uint L = gl_LocalInvocationID.x, s = gl_SubgroupID;
  const uint row0 = pc.t0 + c * C, nrows = min(C, pc.T - row0);
  const uint kcol = (pc.tiled != 0u ? h % pc.nk : h / (pc.nv / pc.nk)) * DK, ldk = pc.nk * DK, ldv = pc.nv * DV;

  if (L < C) {
    sg[L] = L < nrows ? g[(row0 + L) * pc.nv + h] : 0.0;
    sbeta[L] = L < nrows ? beta[(row0 + L) * pc.nv + h] : 0.0;
  }
  barrier();
  if (L == 0u) {
    float run = 0.0;
    [[unroll]] for (uint r = 0u; r < C; ++r) sg[r] = run += sg[r];
  }
  barrier();
  if (L < C) {
    gam[b * C + L] = sg[L];
    sdq[L] = exp(sg[L]);
    sdk[L] = exp(sg[C - 1u] - sg[L]);
  }

  // K K^T and Q K^T: subgroup s owns lower blocks t = s + NSG q of [K K^T ; Q K^T] (20 in all).
  hl_cm_acc acc[5];
  [[unroll]] for (uint qi = 0u; qi < 5u; ++qi) acc[qi] = hl_cm_fill(0.0);
  // This invocation's vec4s of a piece: e = L + u WG (row e / (KW / 4), columns 4 (e % (KW / 4)).. of the piece);
  // literal trip counts (the registers are named by constants once unrolled), the spare trips fold away.
  vec4 pk[TKQ_MAX], pq[TKQ_MAX];
#define SSM_LOAD_KQ(p)                                                                            \
  SSM_UNROLL for (uint u = 0u; u < TKQ_MAX; ++u) {                                                \
    const uint e = L + u * WG, r = e / (KW / 4u), at = V4((row0 + r) * ldk + kcol + (p) + e % (KW / 4u) * 4u); \
    const bool ok = u < TKQ && e < NKQ && r < nrows;                                              \
    pk[u] = ok ? k[at] : vec4(0.0);                                                               \
    pq[u] = ok ? q[at] : vec4(0.0);                                                               \
  }
  if (PREFETCH != 0u) SSM_LOAD_KQ(0u)
  for (uint p = 0u; p < DK; p += KW) {
    if (PREFETCH == 0u) SSM_LOAD_KQ(p)
    barrier();  // the previous piece consumed (and sdq, sdk written)
    SSM_UNROLL for (uint u = 0u; u < TKQ_MAX; ++u) {
      const uint e = L + u * WG, r = e / (KW / 4u), i = e % (KW / 4u) * 4u;
      if (u >= TKQ || e >= NKQ) continue;
      skq[V4(r * KWP + i)] = f16vec4(pk[u]);
      skq[V4(QOFF + r * KWP + i)] = f16vec4(pq[u]);
      kbar[V4((b * C + r) * DK + p + i)] = f16vec4(sdk[r] * pk[u]);
      qbar[V4((b * C + r) * DK + p + i)] = f16vec4(sdq[r] * pq[u]);
    }
    barrier();
    if (PREFETCH != 0u && p + KW < DK) SSM_LOAD_KQ(p + KW)
    if (s < NSG)
      [[unroll]] for (uint qi = 0u; qi < 5u; ++qi) {
        const uint t = s + NSG * qi;
        const uvec2 rc = lower_block(t % 10u);
        [[unroll]] for (uint kk = 0u; kk < KW; kk += HL_CM) {
          hl_cm_a am;
          hl_cm_b bm;
          HL_CM_LOAD_A(am, skq, V4((t < 10u ? 0u : QOFF) + rc.x * 16u * KWP + kk), HL_CM_ROW_MAJOR, V4(KWP));
          HL_CM_LOAD_B(bm, skq, V4(rc.y * 16u * KWP + kk), HL_CM_COL_MAJOR, V4(KWP));
          acc[qi] = hl_cm_muladd(am, bm, acc[qi]);
        }
      }
  }
  // The first round's right-hand sides (below), loaded under A, P and the inverse.
  vec4 pr[TRH_MAX];
#define SSM_LOAD_RHS(p0)                                                                          \
  SSM_UNROLL for (uint u = 0u; u < TRH_MAX; ++u) {                                                \
    const uint e = L + u * WG, half_ = e / NKQ, r = e / (KW / 4u) % C;                            \
    const uint col = (p0) + half_ * KW + e % (KW / 4u) * 4u;                                      \
    pr[u] = vec4(0.0);                                                                            \
    if (u < TRH && e < NRH && r < nrows) {                                                        \
      if (col < DV) pr[u] = sbeta[r] * v[V4((row0 + r) * ldv + h * DV + col)];                    \
      else if (col < DV + DK) pr[u] = -sbeta[r] * sdq[r] * k[V4((row0 + r) * ldk + kcol + col - DV)]; \
    }                                                                                             \
  }
  if (PREFETCH != 0u) SSM_LOAD_RHS(0u)
  // A and P from the blocks, through the subgroup's scratch (the masks and decays need each element's place).
  if (s < NSG)
    [[unroll]] for (uint qi = 0u; qi < 5u; ++qi) {
      const uint t = s + NSG * qi;
      const uvec2 rc = lower_block(t % 10u);
      HL_CM_STORE(scr, s * 256u, acc[qi], HL_CM_ROW_MAJOR, 16u);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      for (uint e = gl_SubgroupInvocationID; e < 64u; e += gl_SubgroupSize) {  // 4 columns each
        const uint i = rc.x * 16u + e / 4u, j = rc.y * 16u + e % 4u * 4u;
        vec4 x;
        [[unroll]] for (uint jj = 0u; jj < 4u; ++jj) {
          const float d = scr[s * 256u + e * 4u + jj] * exp(sg[i] - sg[j + jj]);
          x[jj] = t < 10u ? (j + jj < i ? sbeta[i] * d : 0.0) : (j + jj <= i ? d : 0.0);
        }
        if (t < 10u) sa[V4(i * CP + j)] = f16vec4(x);
        else pm[V4((b * C + i) * C + j)] = f16vec4(x);
      }
      subgroupMemoryBarrierShared();
      subgroupBarrier();  // scratch read before the next block overwrites it
    }
  barrier();  // A complete

  // T = (I + A)^-1 by 16 x 16 blocks, built in skq (free between the products and the right-hand sides): the
  // diagonal blocks D_i = (I + A_ii)^-1 by forward substitution in f32 (a column per invocation, 16 values in
  // registers: x_r = delta_rc - sum_{j<r} A_rj x_j; through scr, then to skq 4 values at a time), then the blocks
  // below by distance i - j on matrices, T_ij = D_i (-sum_{k=j}^{i-1} A_ik T_kj), the sum rounded to f16 once in
  // T_ij's place.
  if (L < C) {
    const uint base = L / 16u * 16u, cl = L % 16u;
    float x[16];
    [[unroll]] for (uint i = 0u; i < 16u; ++i) x[i] = i == cl ? 1.0 : 0.0;
    [[unroll]] for (uint i = 1u; i < 16u; ++i) {
      f16vec4 ar[4];  // row i of the block
      [[unroll]] for (uint j4 = 0u; j4 < 4u; ++j4) ar[j4] = sa[V4((base + i) * CP + base) + j4];
      float acc1 = x[i];
      [[unroll]] for (uint j = 0u; j < i; ++j) acc1 -= float(ar[j / 4u][j % 4u]) * x[j];
      x[i] = acc1;
    }
    [[unroll]] for (uint i = 0u; i < 16u; ++i) scr[base * 16u + i * 16u + cl] = x[i];
  }
  barrier();
  SSM_FOR(e, C * 4u) {  // 4 blocks of 16 rows of 4 vectors
    const uint blk = e / 64u, i = e / 4u % 16u, j = e % 4u * 4u, at = blk * 256u + i * 16u + j;
    skq[V4((blk * 16u + i) * CP + blk * 16u + j)] = f16vec4(scr[at], scr[at + 1u], scr[at + 2u], scr[at + 3u]);
  }
  for (uint dd = 1u; dd < C / 16u; ++dd) {
    barrier();  // the blocks at distance dd - 1 written
    const uint j = s, i = s + dd;  // subgroup s: block (s + dd, s)
    if (s < NSG && i < C / 16u) {
      hl_cm_acc y = hl_cm_fill(0.0);
      for (uint kb = j; kb < i; ++kb) {
        hl_cm_a am;
        hl_cm_b bm;
        HL_CM_LOAD_A(am, sa, V4(i * 16u * CP + kb * 16u), HL_CM_ROW_MAJOR, V4(CP));
        HL_CM_LOAD_B(bm, skq, V4(kb * 16u * CP + j * 16u), HL_CM_ROW_MAJOR, V4(CP));
        y = hl_cm_muladd(am, bm, y);
      }
      HL_CM_SCALE(y, -1.0);
      HL_CM_STORE_F16(skq, V4(i * 16u * CP + j * 16u), y, HL_CM_ROW_MAJOR, V4(CP));
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      hl_cm_a dm;
      hl_cm_b ym;
      HL_CM_LOAD_A(dm, skq, V4(i * 16u * CP + i * 16u), HL_CM_ROW_MAJOR, V4(CP));
      HL_CM_LOAD_B(ym, skq, V4(i * 16u * CP + j * 16u), HL_CM_ROW_MAJOR, V4(CP));
      hl_cm_acc t = hl_cm_muladd(dm, ym, hl_cm_fill(0.0));
      subgroupMemoryBarrierShared();
      subgroupBarrier();  // every invocation past its reads of the sum before it is overwritten
      HL_CM_STORE_F16(skq, V4(i * 16u * CP + j * 16u), t, HL_CM_ROW_MAJOR, V4(CP));
    }
  }
  barrier();  // T complete; A no longer read
  SSM_FOR(e, C * C / 4u) {
    const uint i = e / (C / 4u), j = e % (C / 4u) * 4u;
    sa[V4(i * CP + j)] = j / 16u <= i / 16u ? skq[V4(i * CP + j)] : f16vec4(0.0);
  }

  // [U | -W] = T [beta V | -beta e^gamma K], two pieces per round; subgroup s: output blocks t = s + NSG q of the
  // round's 4 x 2 NB.
  for (uint p0 = 0u; p0 < DV + DK; p0 += 2u * KW) {
    if (PREFETCH == 0u) SSM_LOAD_RHS(p0)
    barrier();  // T written / the previous round consumed
    SSM_UNROLL for (uint u = 0u; u < TRH_MAX; ++u) {
      const uint e = L + u * WG, half_ = e / NKQ, r = e / (KW / 4u) % C, i = e % (KW / 4u) * 4u;
      if (u < TRH && e < NRH) skq[V4(half_ * QOFF + r * KWP + i)] = f16vec4(pr[u]);
    }
    barrier();
    if (PREFETCH != 0u && p0 + 2u * KW < DV + DK) SSM_LOAD_RHS(p0 + 2u * KW)
    if (s < NSG)
      [[unroll]] for (uint qi = 0u; qi < 8u * NB / NSG; ++qi) {
        const uint t = s + NSG * qi, half_ = t / (4u * NB), rb = t % (4u * NB) / NB, cb = t % NB;
        const uint col = p0 + half_ * KW + cb * 16u;
        if (col >= DV + DK) continue;  // subgroup-uniform
        hl_cm_acc o = hl_cm_fill(0.0);
        [[unroll]] for (uint kk = 0u; kk < C; kk += HL_CM) {
          hl_cm_a am;
          hl_cm_b bm;
          HL_CM_LOAD_A(am, sa, V4(rb * 16u * CP + kk), HL_CM_ROW_MAJOR, V4(CP));
          HL_CM_LOAD_B(bm, skq, V4(half_ * QOFF + kk * KWP + cb * 16u), HL_CM_ROW_MAJOR, V4(KWP));
          o = hl_cm_muladd(am, bm, o);
        }
        if (col < DV) HL_CM_STORE(u, (b * C + rb * 16u) * DV + col, o, HL_CM_ROW_MAJOR, DV);
        else HL_CM_STORE_F16(wn, V4((b * C + rb * 16u) * DK + col - DV), o, HL_CM_ROW_MAJOR, V4(DK));
      }
  }
}

#endif
