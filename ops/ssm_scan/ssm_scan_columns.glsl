// ssm_scan (vulkan:block_resident, and vulkan:per_token one token per dispatch): the gated delta rule
//   S *= exp(g); r = S^T k; delta = beta (v - r); S += k delta^T; o = S^T q
// over tokens [t0, t0 + T). Each value column j of a head's state S [DK, dv] evolves on its own (only k,
// q, g, beta are shared), so a workgroup owns (value head, COLS columns), keeps that slice of S in
// registers for all T tokens, and reads and writes it once. SPLIT invocations share a column, each a
// strided 1/SPLIT of its DK entries. The inputs of TCH tokens at a time (k, q, the COLS values of v,
// exp(g), beta) are staged in shared memory, loaded while the previous TCH tokens are computed, so no
// token waits on a global load. Per token one fused reduction gives S^T k and S^T q of the undecayed state,
// since o = exp(g) S^T q + delta (k.q) and r = exp(g) S^T k; k.q, the same for every column, is summed once per
// staged token as it is staged (kq_staged(): each role loads UK entries of one token, and the token's roles,
// consecutive in one subgroup, add their products by a butterfly before the staging's barrier), else (and
// with SCAN_PREP) as a third term of the column's reduction.
// NORM (gdn_output vulkan:fused_decode): a workgroup owns a whole value head (COLS = dv) and writes the gated
// RMSNorm of each token's o instead of o, y = o / sqrt(mean(o^2) + eps) * gain * silu(z) over the head, so the norm
// needs no dispatch (and no dependent step) of its own.
// CONTIG: invocation p of a column owns entries [p RC, p RC + RC) (RC a whole number of vec4s) instead of every
// SPLIT-th, so each token's k and q are read from shared memory 16 bytes at a time (a quarter of the loads of the
// strided form); each invocation's run is followed by a vec4 of padding, which puts a column's SPLIT reads of one
// step on distinct banks. Entries past DK are zeros in shared memory and in the state, so they add nothing.
// SCAN_PREP (gdn_decode.comp: gdn_decode's vulkan:fused_decode, one decode token, with NORM): the scan's inputs are
// formed here from the projections instead of read (gdn_prep's work for this head): the causal conv of the head's q and
// k channels (of its key head) and v channels over [conv state; x], silu, q and k L2-normalised (q scaled), beta and the
// decay from b and a. The conv state's v channels are this workgroup's alone and shift as they are read; the q and k
// channels of a key head are read by every value head on it, so each of those workgroups takes a ticket from the key
// head's counter after its reads, and the one that draws the last shifts them and resets the counter.
// SCAN_PREP with blocks > 1 (pc.blocks column blocks per value head, COLS = dv / blocks): the head's state is spread over
// more workgroups (more of the device's load paths on its cold slices), so the gated norm, over the whole head, is
// left to the projection (NORM 2) or finished by the head's last block (NORM 1): each writes its o and its sum of squares, takes a ticket from the head's counter,
// and the one that draws the last scales the head's o in place.
// Included by ssm_scan_columns.comp and ops/gdn_decode/gdn_decode.comp.
#ifndef HL_SSM_SCAN_COLUMNS_GLSL
#define HL_SSM_SCAN_COLUMNS_GLSL
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;   // COLS * SPLIT (the host sets it so)
layout(constant_id = 1) const uint COLS = 32;  // value columns per workgroup
layout(constant_id = 2) const uint SPLIT = 4;  // invocations per column, a power of two
layout(constant_id = 3) const uint DK = 128;   // key head dim
layout(constant_id = 4) const uint TCH = 16;   // tokens staged in shared memory at a time
// 1: y = gated RMSNorm of o over the head (COLS = dv). 2 (SCAN_PREP): y = o * gain * silu(z), the head's 1 / rms left to
// the output projection (rms_scaled_matmul), each block's sum of squares of o written beside it: no ticket for the norm.
layout(constant_id = 5) const uint NORM = 0;
layout(constant_id = 6) const uint CONTIG = 0; // 1: contiguous entries per invocation, k and q read as vec4 (above)
layout(constant_id = 7) const uint KTAPS = 4;  // SCAN_PREP: conv taps
// SCAN_PREP, diagnosis only (tunable gdn_decode.fused_decode.diag, results wrong): 1 the conv's loads left out
// (constants instead), 2 no ticket (the key heads' conv channels not shifted), 4 no state loaded or stored, 8 no gated
// norm (o written as it is): what each part of the step costs (the parts overlap; `experiment --time-failing`).
layout(constant_id = 8) const uint DIAG = 0;
// 1: a whole staged chunk's tokens unrolled, so the compiler may issue later tokens' shared loads (independent of the
// state) under earlier tokens' reductions; one workgroup per SM leaves it the registers.
layout(constant_id = 9) const uint UNROLL = 0;
layout(constant_id = 10) const uint SGMIN = 1;  // the smallest subgroup size the device may run (kq_staged()'s condition)
// Partial sums per invocation in a token's dot products (1, 2 or 4): the R products of S^T k summed in ACC independent
// chains, so the dependent FMA chain that each token waits on before its reduction is R / ACC long.
layout(constant_id = 11) const uint ACC = 1;
// SCAN_PREP: 1 reads the key head's ticket (an atomic's returned value) at the end of the step, so the step does not wait
// on the atomic's round trip; the key head's last workgroup shifts its q and k channels after its own output instead of
// before. 0: the ticket is read right after it is taken.
layout(constant_id = 12) const uint LATE_TICKET = 0;
#define GROUP SPLIT  // hl_group_sum sums over a column's invocations
#define HL_WORKGROUP_SUM_SIZE WG
#include "common.glsl"
#include "group_sum.glsl"

const uint RV = ((DK + SPLIT - 1u) / SPLIT + 3u) / 4u;  // CONTIG: vec4s of entries per invocation
const uint RC = 4u * RV, KSTR = SPLIT * (RV + 1u);     // CONTIG: entries per invocation; vec4s per staged token
const uint R = CONTIG != 0u ? RC : (DK + SPLIT - 1u) / SPLIT;  // state entries per invocation

#ifdef SCAN_PREP
layout(std430, binding = 0) readonly buffer X { float xin[]; };      // [1, C]: q | k | v channels, as projected
layout(std430, binding = 1) readonly buffer B { float bpre[]; };     // [1, nv]
layout(std430, binding = 2) readonly buffer Apre { float apre[]; };  // [1, nv]
layout(std430, binding = 3) readonly buffer W { float convw[]; };    // [C, KTAPS]
layout(std430, binding = 4) readonly buffer Aw { float Alog[]; };    // [nv]: A
layout(std430, binding = 9) readonly buffer Dt { float dt_bias[]; };  // [nv]
layout(std430, binding = 10) buffer Conv { float cstate[]; };         // [KTAPS - 1, C]
// [nk] key heads' and [nv] value heads' counters (0 between calls), then [nv, blocks] the blocks' sums of squares (bits)
layout(std430, binding = 11) coherent buffer Tickets { uint tickets[]; };
// NORM 2: [1, nv * blocks] each block's sum of squares of its columns of o
layout(std430, binding = 12) writeonly buffer SumSq { float sumsq[]; };
#include "softplus.glsl"
#else
layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer Kk { float k[]; };
layout(std430, binding = 2) readonly buffer V { float v[]; };
layout(std430, binding = 3) readonly buffer Beta { float beta[]; };
layout(std430, binding = 4) readonly buffer G { float g[]; };
#endif
layout(std430, binding = 5) buffer State { float state[]; };  // [nv, DK * dv], S[i][j] at i * dv + j
#ifdef SCAN_PREP
layout(std430, binding = 6) coherent buffer O { float o[]; };  // with blocks > 1 read back by the head's last block
#else
layout(std430, binding = 6) writeonly buffer O { float o[]; };  // o, or with NORM its gated norm y
#endif
layout(std430, binding = 7) readonly buffer Z { float z[]; };      // NORM: the gate [T, nv * dv] (else unread)
layout(std430, binding = 8) readonly buffer Gain { float gain[]; };  // NORM: [dv] (else unread)
layout(push_constant) uniform Push {
  uint t0, T;          // the tokens walked
  uint nk, nv, dv;     // key heads, value heads, value head dim
  uint blocks;         // column blocks per value head
  uint tiled;          // value head h reads key head h % nk (GGUF order), else h / (nv / nk) (HF order)
  float eps;           // NORM's
#ifdef SCAN_PREP
  uint C;              // channels of x
  float scale, l2eps;  // q's scale; the L2 norms' epsilon
#endif
} pc;

shared float sk[CONTIG != 0u ? 1u : TCH * DK], sq[CONTIG != 0u ? 1u : TCH * DK], sv[TCH * COLS];
shared vec4 stok[TCH];  // a staged token's scalars, one load for all of them: (exp(g), beta, kq_staged()'s k.q, unused)
shared vec4 sk4[CONTIG != 0u ? TCH * KSTR : 1u], sq4[CONTIG != 0u ? TCH * KSTR : 1u];

// State entry r of invocation p of a column.
uint entry(uint p, uint r) { return CONTIG != 0u ? p * RC + r : p + r * SPLIT; }

// The inputs of one chunk, loaded to registers by fetch() and stored to shared memory by stage(); the
// trip counts are constant, so the loops unroll and all loads are in flight together.
const uint UK = (TCH * DK + WG - 1u) / WG, UV = (TCH * COLS + WG - 1u) / WG, UG = (TCH + WG - 1u) / WG;
float pk[UK], pq[UK], pv[UV], pg[UG], pb[UG];
uint h, j0, kcol, ldk, ldv;
// k.q staged where a role's UK entries lie in one token and a token's DK / UK roles, a power of two, fit in a subgroup.
// (A function of specialization constants, which the driver folds: glslang mis-emits the same as a constant.)
const uint KQG = DK / UK;
bool kq_staged() {
#ifdef SCAN_PREP
  return false;  // one token, staged by prep()
#else
  uint g = KQG;
  return DK % UK == 0u && (g & (g - 1u)) == 0u && g <= SGMIN;
#endif
}

#ifndef SCAN_PREP
// Entry u of this invocation's share of a chunk's k and q. kq_staged(): UK entries of one token, its KQG roles
// (consecutive) reading neighbouring entries at each u, so each load and store of a subgroup is a few runs; else
// entry u WG + the invocation.
uint kq_entry(uint u) {
  const uint r = hl_role();
  return kq_staged() ? (r / KQG) * DK + u * KQG + r % KQG : u * WG + gl_LocalInvocationID.x;
}

void fetch(uint c0) {  // tokens [c0, c0 + TCH) of the walk, those that exist
  const uint n = c0 < pc.T ? min(TCH, pc.T - c0) : 0u, t = pc.t0 + c0;
  [[unroll]] for (uint u = 0u; u < UK; ++u) {
    const uint e = kq_entry(u), row = (t + e / DK) * ldk + kcol + e % DK;
    if (e < n * DK) pk[u] = k[row], pq[u] = q[row];
  }
  [[unroll]] for (uint u = 0u; u < UV; ++u) {
    const uint e = u * WG + gl_LocalInvocationID.x, jj = j0 + e % COLS;
    if (e < n * COLS) pv[u] = jj < pc.dv ? v[(t + e / COLS) * ldv + h * pc.dv + jj] : 0.0;
  }
  [[unroll]] for (uint u = 0u; u < UG; ++u) {
    const uint e = u * WG + gl_LocalInvocationID.x;
    if (e < n) pg[u] = g[(t + e) * pc.nv + h], pb[u] = beta[(t + e) * pc.nv + h];
  }
}

void stage(uint n) {
  if (kq_staged()) {  // before the barrier that follows the staging
    float kq = 0.0;
    [[unroll]] for (uint u = 0u; u < UK; ++u) kq += kq_entry(u) < n * DK ? pk[u] * pq[u] : 0.0;
    for (uint m = KQG / 2u; m > 0u; m >>= 1) kq += subgroupShuffleXor(kq, m);
    const uint tt = kq_entry(0u) / DK;
    if (hl_role() % KQG == 0u && tt < n) stok[tt].z = kq;
  }
  [[unroll]] for (uint u = 0u; u < UK; ++u) {
    const uint e = kq_entry(u);
    if (e < n * DK) {
      if (CONTIG != 0u) {
        const uint i = e % DK, at = (e / DK) * KSTR + (i / RC) * (RV + 1u) + (i % RC) / 4u;
        sk4[at][i % 4u] = pk[u];
        sq4[at][i % 4u] = pq[u];
      } else {
        sk[e] = pk[u], sq[e] = pq[u];
      }
    }
  }
  [[unroll]] for (uint u = 0u; u < UV; ++u) {
    const uint e = u * WG + gl_LocalInvocationID.x;
    if (e < n * COLS) sv[e] = pv[u];
  }
  [[unroll]] for (uint u = 0u; u < UG; ++u) {
    const uint e = u * WG + gl_LocalInvocationID.x;
    if (e < n) stok[e].xy = vec2(exp(pg[u]), pb[u]);
  }
}
#else
// Entry i of the token's q and k in shared memory (either layout).
void put_kq(uint i, float kv, float qv) {
  if (CONTIG != 0u) {
    const uint at = (i / RC) * (RV + 1u) + (i % RC) / 4u;
    sk4[at][i % 4u] = kv;
    sq4[at][i % 4u] = qv;
  } else {
    sk[i] = kv, sq[i] = qv;
  }
}

shared float pu[2u * DK + COLS];  // silu(conv) of the head's q, k and v channels
shared uint ticket, norm_ticket;

uint drawn;  // invocation 0: the ticket it drew from its key head's counter
// The key head's last workgroup to draw a ticket (all of that head's reads of its q and k conv state done) shifts them.
void shift_kq() {
  if ((DIAG & 2u) != 0u) return;
  if (gl_LocalInvocationID.x == 0u) ticket = drawn;
  barrier();
  if (ticket + 1u == pc.nv / pc.nk * pc.blocks) {  // uniform
    const uint kd = pc.nk * DK;
    for (uint e = gl_LocalInvocationID.x; e < 2u * DK; e += WG) {
      const uint c = e < DK ? kcol + e : kd + kcol + (e - DK);
      for (uint j = 0u; j + 2u < KTAPS; ++j) cstate[j * pc.C + c] = cstate[(j + 1u) * pc.C + c];
      cstate[(KTAPS - 2u) * pc.C + c] = xin[c];
    }
    if (gl_LocalInvocationID.x == 0u) tickets[kcol / DK] = 0u;
  }
}

// The one token's inputs of value head h (COLS = dv: the whole head) from the projections, into the staging arrays.
void prep() {
  const uint kh = kcol / DK, kd = pc.nk * DK, NC = 2u * DK + COLS;  // COLS: this block's v channels
  float sq2 = 0.0, sk2 = 0.0;
  // The gates' inputs, loaded before the conv so that their latency hides behind it and the sums.
  float gb = 0.0, ga = 0.0, gA = 0.0, gdt = 0.0;
  if (gl_LocalInvocationID.x == 0u) gb = bpre[h], ga = apre[h], gA = Alog[h], gdt = dt_bias[h];
  for (uint e = gl_LocalInvocationID.x; e < NC; e += WG) {
    const uint c = e < DK ? kcol + e : e < 2u * DK ? kd + kcol + (e - DK) : 2u * kd + h * pc.dv + j0 + (e - 2u * DK);
    float win[KTAPS];  // [conv state; x] rows, oldest first
    for (uint j = 0u; j + 1u < KTAPS; ++j) win[j] = (DIAG & 1u) != 0u ? 0.5 : cstate[j * pc.C + c];
    win[KTAPS - 1u] = (DIAG & 1u) != 0u ? 0.25 : xin[c];
    float acc = 0.0;  // taps summed oldest first, as the reference does
    for (uint j = 0u; j < KTAPS; ++j) acc += ((DIAG & 1u) != 0u ? 0.125 : convw[c * KTAPS + j]) * win[j];
    const float u = acc / (1.0 + exp(-acc));
    pu[e] = u;
    if (e < DK) sq2 += u * u;
    else if (e < 2u * DK) sk2 += u * u;
    else if ((DIAG & 1u) == 0u)  // this head's own v channel: shift its state now (read above by this invocation alone)
      for (uint j = 0u; j + 1u < KTAPS; ++j) cstate[j * pc.C + c] = win[j + 1u];
  }
  const float fq = pc.scale / sqrt(hl_workgroup_sum(sq2) + pc.l2eps), fk = 1.0 / sqrt(hl_workgroup_sum(sk2) + pc.l2eps);
  for (uint i = gl_LocalInvocationID.x; i < DK; i += WG) put_kq(i, pu[DK + i] * fk, pu[i] * fq);
  for (uint j = gl_LocalInvocationID.x; j < COLS; j += WG) sv[j] = pu[2u * DK + j];
  if (gl_LocalInvocationID.x == 0u) {
    stok[0].xy = vec2(exp(gA * softplus(ga + gdt)), 1.0 / (1.0 + exp(-gb)));
    if ((DIAG & 2u) == 0u) drawn = atomicAdd(tickets[kh], 1u);  // after every read of the key head's conv state here
  }                                                              // (the sums' barriers)
  if (LATE_TICKET == 0u) shift_kq();
}

#endif

// The walk's state: this invocation's entries of S, its place in the workgroup, NORM's gate and gain (SCAN_PREP).
float s[R];
uint grp, L, col, p, j;
bool live;
float zpre, gpre;

// Token tt of the chunk staged at c0: this column's r = S^T k, the update and o (or its gated norm).
void token(uint c0, uint tt) {
  vec3 xa[4];  // ACC partial sums of (S^T k, S^T q, k.q) for this column, undecayed
  [[unroll]] for (uint a = 0u; a < 4u; ++a) xa[a] = vec3(0.0);
  vec4 kr[CONTIG != 0u ? RV : 1u];
  if (CONTIG != 0u) {
    [[unroll]] for (uint w = 0u; w < RV; ++w) {
      const uint at = tt * KSTR + p * (RV + 1u) + w;
      const vec4 sw = vec4(s[4u * w], s[4u * w + 1u], s[4u * w + 2u], s[4u * w + 3u]), qw = sq4[at];
      kr[w] = sk4[at];
      xa[w % ACC] += vec3(dot(sw, kr[w]), dot(sw, qw), kq_staged() ? 0.0 : dot(kr[w], qw));
    }
  } else {
    [[unroll]] for (uint r = 0u; r < R; ++r) {
      const uint i = p + r * SPLIT;
      if (i < DK) xa[r % ACC] += vec3(s[r] * sk[tt * DK + i], s[r] * sq[tt * DK + i], kq_staged() ? 0.0 : sk[tt * DK + i] * sq[tt * DK + i]);
    }
  }
  vec3 x = ACC >= 4u ? (xa[0] + xa[1]) + (xa[2] + xa[3]) : ACC == 2u ? xa[0] + xa[1] : xa[0];
  const vec4 tok = stok[tt];
  if (kq_staged()) {
    x = vec3(hl_group_sum(x.x, L), hl_group_sum(x.y, L), tok.z);
  } else {
    x = vec3(hl_group_sum(x.x, L), hl_group_sum(x.y, L), hl_group_sum(x.z, L));
  }
  const float dec = tok.x, delta = tok.y * (sv[tt * COLS + col] - dec * x.x);
  if (CONTIG != 0u) {
    [[unroll]] for (uint r = 0u; r < R; ++r) s[r] = dec * s[r] + kr[r / 4u][r % 4u] * delta;
  } else {
    [[unroll]] for (uint r = 0u; r < R; ++r) {
      const uint i = p + r * SPLIT;
      if (i < DK) s[r] = dec * s[r] + sk[tt * DK + i] * delta;
    }
  }
  const float ov = dec * x.y + delta * x.z;
  const uint at = (pc.t0 + c0 + tt) * ldv + h * pc.dv + j;
#ifdef SCAN_PREP
  if (NORM == 2u && (DIAG & 8u) == 0u) {  // uniform: the gate here, the block's sum of squares for the projection's 1 / rms
    const float ss = hl_workgroup_sum(live && p == 0u ? ov * ov : 0.0);
    if (live && p == 0u) o[at] = ov * gpre * (zpre / (1.0 + exp(-zpre)));
    if (gl_LocalInvocationID.x == 0u) sumsq[grp] = ss;  // one token
    return;
  }
  const bool plain = NORM == 0u || (DIAG & 8u) != 0u;
#else
  const bool plain = NORM == 0u;
#endif
  if (plain) {
    if (live && p == 0u) o[at] = ov;
  } else {  // uniform: every invocation reaches the sum
    const float ss = hl_workgroup_sum(live && p == 0u ? ov * ov : 0.0), ms = ss / float(pc.dv);
#ifdef SCAN_PREP
    if (pc.blocks > 1u) {  // uniform: the head's last block scales it (below)
      if (live && p == 0u) o[at] = ov;
      if (gl_LocalInvocationID.x == 0u) tickets[pc.nk + pc.nv + grp] = floatBitsToUint(ss);
      return;
    }
#endif
    if (live && p == 0u) {
#ifdef SCAN_PREP
      const float zi = zpre, gj = gpre;
#else
      const float zi = z[at], gj = gain[j];
#endif
      o[at] = ov / sqrt(ms + pc.eps) * gj * (zi / (1.0 + exp(-zi)));
    }
  }
}

void main() {
  grp = hl_group_index();
  h = grp / pc.blocks;
  if (h >= pc.nv) return;  // uniform per workgroup
  L = hl_role();  // a column's invocations: consecutive roles, one subgroup where they fit

  j0 = (grp % pc.blocks) * COLS;
  kcol = (pc.tiled != 0u ? h % pc.nk : h / (pc.nv / pc.nk)) * DK, ldk = pc.nk * DK, ldv = pc.nv * pc.dv;
  col = L / SPLIT, p = L % SPLIT, j = j0 + col;
  live = j < pc.dv;
  const uint sbase = h * DK * pc.dv + j;

  [[unroll]] for (uint r = 0u; r < R; ++r) {
    const uint i = entry(p, r);
#ifdef SCAN_PREP
    if ((DIAG & 4u) != 0u) {
      s[r] = 0.0;
      continue;
    }
#endif
    s[r] = live && i < DK ? state[sbase + i * pc.dv] : 0.0;
  }
  if (CONTIG != 0u)  // entries past DK and the padding stay zero (stage writes only entries below DK)
    for (uint e = gl_LocalInvocationID.x; e < TCH * KSTR; e += WG) sk4[e] = sq4[e] = vec4(0.0);
#ifdef SCAN_PREP
  // NORM's gate and gain for the one token, loaded now: the step's end does not wait on them.
  zpre = 0.0, gpre = 0.0;
  if (NORM != 0u && live && p == 0u) zpre = z[pc.t0 * ldv + h * pc.dv + j], gpre = gain[j];
  prep();  // one token (the host checks T = 1)
#else
  fetch(0u);
#endif
  for (uint c0 = 0u; c0 < pc.T; c0 += TCH) {
    const uint n = min(TCH, pc.T - c0);
    barrier();  // the previous chunk is consumed (SCAN_PREP: its staging written)
#ifndef SCAN_PREP
    stage(n);
    barrier();
    fetch(c0 + TCH);  // the next chunk's loads fly while this one is computed
#endif
    if (UNROLL != 0u && n == TCH) {  // uniform
      [[unroll]] for (uint tt = 0u; tt < TCH; ++tt) token(c0, tt);
    } else {
      for (uint tt = 0u; tt < n; ++tt) token(c0, tt);
    }
  }
  [[unroll]] for (uint r = 0u; r < R; ++r) {
    const uint i = entry(p, r);
#ifdef SCAN_PREP
    if ((DIAG & 4u) != 0u) continue;
#endif
    if (live && i < DK) state[sbase + i * pc.dv] = s[r];
  }
#ifdef SCAN_PREP
  if (LATE_TICKET != 0u) shift_kq();
  if (NORM != 1u || (DIAG & 8u) != 0u || pc.blocks == 1u) return;  // uniform
  // The head's last block to finish: y = o / sqrt(mean(o^2) + eps) * gain * silu(z) over the head, from every block's o
  // and sum of squares.
  memoryBarrierBuffer();
  barrier();
  if (gl_LocalInvocationID.x == 0u) norm_ticket = atomicAdd(tickets[pc.nk + h], 1u);
  barrier();
  if (norm_ticket + 1u != pc.blocks) return;  // uniform
  memoryBarrierBuffer();
  float ss = 0.0;
  for (uint b = 0u; b < pc.blocks; ++b) ss += uintBitsToFloat(tickets[pc.nk + pc.nv + h * pc.blocks + b]);
  const float rms = sqrt(ss / float(pc.dv) + pc.eps);
  for (uint jj = gl_LocalInvocationID.x; jj < pc.dv; jj += WG) {
    const uint at = pc.t0 * ldv + h * pc.dv + jj;
    const float zi = z[at];
    o[at] = o[at] / rms * gain[jj] * (zi / (1.0 + exp(-zi)));
  }
  if (gl_LocalInvocationID.x == 0u) tickets[pc.nk + h] = 0u;
#endif
}

#endif
