// attention_decode (vulkan:fused_decode): a full-attention layer's decode step between its projections and its output
// projection in one dispatch (two where the keys are split: attention_merge.comp combines the splits):
//   q = rope(rmsnorm(query half of qg's head n) * q_norm), k = rope(rmsnorm(k) * k_norm) at position pos;
//   k, v appended at cache row kv_len; o = softmax(q K^T / sqrt(D)) V * sigmoid(gate half of qg's head n).
// Unfused, that step is nine dependent dispatches (two slices, two norms, two ropes, the append, the split attention,
// its merge); this is one. One workgroup per (query head n, key split s), scoring as attention_flash.comp's decode path (BLOCK keys
// at a time, LPK lanes per key, online softmax). Each workgroup normalises and rotates its own head's query in shared
// memory. The workgroups whose split holds the new key (row kv_len) form the new key and value of their KV head the
// same way and use them from shared memory instead of the cache, so none waits on an append; the workgroup of the KV
// head's first query head and split 0 also writes them to the cache rows the later steps read. Where a head's keys are
// split, each split's workgroup writes its partial [O (D), max, sum] and takes a ticket from the head's counter; the one
// that draws the last merges the head's partials (as attention_merge.comp) into o and resets the counter.
// A block's cached key rows and (with PV_FULL) value rows are loaded into registers ahead of their use: the first block's
// before the norms and ropes, which do not depend on them (their memory latency hides behind that work); each next
// block's at the end of the block before. The new key's row comes from shared memory, never from the cache. The rest
// of the step's global reads (query, gate, new key and value, gains, frequencies) are issued together before the first
// barrier, and q's and k's norms share one workgroup reduction.
#version 450
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint D = 256;     // head dim
layout(constant_id = 2) const uint BLOCK = 32;  // keys per step; a power of two <= WG
// 1: the block's P V sums run BLOCK steps (a constant count: unrolled, every value load issued together), the keys past
// the block's end adding exact zeros; 0: as many steps as the block has keys.
layout(constant_id = 3) const uint PV_FULL = 0;
// Diagnosis only (tunable attention_decode.fused_decode.diag, results wrong): 1 the query's norm and rope left out (the
// raw query staged), 2 the new key's likewise, 4 no scoring (no block of keys walked), 8 no merge of the splits: what
// each part of the step costs (the parts overlap; `experiment --time-failing`).
layout(constant_id = 4) const uint DIAG = 0;
#include "common.glsl"
#include "rope_angle.glsl"

layout(std430, binding = 0) readonly buffer QG { float qg[]; };  // [n_q * 2D]: per head D query values, then D gate values
layout(std430, binding = 1) readonly buffer KN { float kn[]; };  // [n_kv * D]: the new key, as projected
layout(std430, binding = 2) readonly buffer VN { float vn[]; };  // [n_kv * D]: the new value
layout(std430, binding = 3) readonly buffer QNorm { float qgain[]; };  // [D]
layout(std430, binding = 4) readonly buffer KNorm { float kgain[]; };  // [D]
layout(std430, binding = 5) readonly buffer Freq { uvec2 freq[]; };    // [R / 2] (ops/rope/freq_table.h)
layout(std430, binding = 6) buffer KC { float kc[]; };  // [capacity, n_kv * D]
layout(std430, binding = 7) buffer VC { float vc[]; };
layout(std430, binding = 8) coherent buffer O { float o[]; };  // o [n_q * D]; split: partials [n_q * splits, D + 2]
layout(std430, binding = 9) writeonly buffer OF { float of[]; };  // split: o [n_q * D]
layout(std430, binding = 10) buffer Tickets { uint tickets[]; };  // split: one counter per query head, 0 between calls
layout(push_constant) uniform Push {
  uint n_q, group;          // query heads; query heads per KV head
  uint kv_len;              // cached rows before this token: the new key's row
  uint pos;                 // the token's position (rope)
  uint pairs;               // rotated pairs, R / 2
  uint splits, split_keys;  // key splits (every one holds keys)
  float eps, scale;         // the norms' epsilon; 1 / sqrt(D)
} pc;

const uint DPI = (D + WG - 1u) / WG;  // head dims per invocation
const uint LPK = WG / BLOCK;         // lanes per key while scoring
const uint DPL = (D + LPK - 1u) / LPK;  // head dims per lane while scoring
const float NEG = -1e30;             // a finite "minus infinity", as attention_flash.comp
const uint VPRE = PV_FULL != 0u ? BLOCK * DPI : 1u;  // value rows' entries held per invocation (PV_FULL only)

shared float qs[D], ks[D], vs[D], tq[D], tk[D];
shared float part[WG], sc[BLOCK], ps[BLOCK];
shared vec2 red[WG];  // per-subgroup partials of the preamble's two sums and of the merge's (max, sum) pairs
shared uint ticket;

// The sums of v.x and of v.y over the workgroup, to every invocation, behind one barrier: subgroup sums, then every
// invocation adds the subgroups' partials. Uniform control flow.
vec2 workgroup_sum2(vec2 v) {
  const vec2 s = subgroupAdd(v);
  if (subgroupElect()) red[gl_SubgroupID] = s;
  barrier();
  vec2 t = vec2(0.0);
  for (uint i = 0u; i < hl_num_subgroups(); ++i) t += red[i];
  return t;
}

// The rotated value at head dim d of the row normalised in t (NeoX pairs (j, j + pairs) over the first 2 pairs dims;
// f: the pair's frequency, loaded ahead).
float rope_at(uint d, uvec2 f, bool key) {
  const float y = key ? tk[d] : tq[d];
  if (d >= 2u * pc.pairs) return y;
  const uint j = d < pc.pairs ? d : d - pc.pairs;
  const float ang = hl_rope_angle(pc.pos, f), c = cos(ang), s = sin(ang);
  const float a = key ? tk[j] : tq[j], b = key ? tk[j + pc.pairs] : tq[j + pc.pairs];
  return d < pc.pairs ? a * c - b * s : b * c + a * s;
}

// The cached rows of the block at b0 (keys [b0, min(b0 + BLOCK, k1))) this invocation reads: its key's DPL entries
// while scoring, and with PV_FULL the block's values at its DPI dims. Rows past the block repeat its last; the new
// key's row (kv_len) is not read (it is taken from shared memory).
void load_block(uint b0, uint k1, uint key, uint lane, uint W, uint kv, out float kr[DPL], out float vr[VPRE]) {
  const uint nb = min(BLOCK, k1 - b0), kk = b0 + min(key, nb - 1u);
  [[unroll]] for (uint i = 0u; i < DPL; ++i) {
    const uint d = lane + i * LPK;
    kr[i] = d < D && kk != pc.kv_len ? kc[kk * W + kv + d] : 0.0;
  }
  [[unroll]] for (uint j = 0u; j < VPRE; ++j) vr[j] = 0.0;
  if (PV_FULL != 0u)
    [[unroll]] for (uint j = 0u; j < BLOCK; ++j) {
      const uint kj = b0 + min(j, nb - 1u);
      [[unroll]] for (uint r = 0u; r < DPI; ++r) {
        const uint d = gl_LocalInvocationID.x + r * WG;
        vr[j * DPI + r] = d < D && kj != pc.kv_len ? vc[kj * W + kv + d] : 0.0;
      }
    }
}

void main() {
  const uint g = hl_group_index();
  const uint n = g / pc.splits, s = g - n * pc.splits;
  if (n >= pc.n_q) return;  // uniform per workgroup
  const uint lid = gl_LocalInvocationID.x, m = n / pc.group;
  const uint W = (pc.n_q / pc.group) * D, kv = m * D;  // cache row width; this KV head's columns
  const uint k0 = s * pc.split_keys, k1 = min(k0 + pc.split_keys, pc.kv_len + 1u);
  const bool has_new = k1 == pc.kv_len + 1u;               // this split ends with the new key
  const bool writer = s == 0u && n % pc.group == 0u;       // appends the KV head's new row
  const bool new_key = has_new || writer;                  // forms the new key and value (uniform per workgroup)
  const uint key = lid / LPK, lane = lid - key * LPK;
  float kr[DPL], vr[VPRE];
  if ((DIAG & 4u) == 0u && k0 < k1) load_block(k0, k1, key, lane, W, kv, kr, vr);

  // Every global read of the preamble issued before its first barrier (a chain of round trips otherwise): the
  // query and gate halves, the new key and value, both gains, the pairs' frequencies.
  float xq[DPI], xg[DPI], xk[DPI], xv[DPI], gq[DPI], gk[DPI];
  uvec2 fr[DPI];
  vec2 ss = vec2(0.0);
  [[unroll]] for (uint r = 0u; r < DPI; ++r) {
    const uint d = lid + r * WG;
    const bool inside = d < D, nk = inside && new_key;
    xq[r] = inside ? qg[n * 2u * D + d] : 0.0;
    xg[r] = inside ? qg[n * 2u * D + D + d] : 0.0;
    gq[r] = inside ? qgain[d] : 0.0;
    xk[r] = nk ? kn[kv + d] : 0.0;
    xv[r] = nk ? vn[kv + d] : 0.0;
    gk[r] = nk ? kgain[d] : 0.0;
    fr[r] = inside && d < 2u * pc.pairs ? freq[d < pc.pairs ? d : d - pc.pairs] : uvec2(0u);
    ss += vec2(xq[r] * xq[r], xk[r] * xk[r]);
  }
  // q and k rmsnorm'd with their gains (as rmsnorm.comp), both sums behind one barrier, then rotated at pc.pos (as
  // rope.comp) into qs, ks. DIAG 1 / 2 stage the raw query / key instead.
  const vec2 tot = workgroup_sum2(ss);
  const float iq = 1.0 / sqrt(tot.x / float(D) + pc.eps), ik = 1.0 / sqrt(tot.y / float(D) + pc.eps);
  [[unroll]] for (uint r = 0u; r < DPI; ++r) {
    const uint d = lid + r * WG;
    if (d >= D) continue;
    tq[d] = xq[r] * iq * gq[r];
    tk[d] = xk[r] * ik * gk[r];
    if (new_key) vs[d] = xv[r];
  }
  barrier();
  [[unroll]] for (uint r = 0u; r < DPI; ++r) {
    const uint d = lid + r * WG;
    if (d >= D) continue;
    qs[d] = (DIAG & 1u) != 0u ? xq[r] : rope_at(d, fr[r], false);
    if (new_key) {
      const float y = (DIAG & 2u) != 0u ? xk[r] : rope_at(d, fr[r], true);
      ks[d] = y;
      if (writer) {
        kc[pc.kv_len * W + kv + d] = y;
        vc[pc.kv_len * W + kv + d] = xv[r];
      }
    }
  }
  barrier();  // qs, ks, vs complete

  float mx = NEG, l = 0.0, acc[DPI];
  [[unroll]] for (uint r = 0u; r < DPI; ++r) acc[r] = 0.0;
  for (uint b0 = k0; b0 < k1 && (DIAG & 4u) == 0u; b0 += BLOCK) {  // uniform: k0, k1 depend on the workgroup only
    const uint nb = min(BLOCK, k1 - b0), kk = b0 + key;
    // A constant trip count, unrolled: every load of the key's row is issued before the first product waits on one.
    float dot = 0.0;
    if (key < nb && kk == pc.kv_len) {
      [[unroll]] for (uint i = 0u; i < DPL; ++i) {
        const uint d = lane + i * LPK;
        if (d < D) dot += qs[d] * ks[d];
      }
    } else if (key < nb) {
      [[unroll]] for (uint i = 0u; i < DPL; ++i) {
        const uint d = lane + i * LPK;
        if (d < D) dot += qs[d] * kr[i];
      }
    }
    part[lid] = dot;
    barrier();
    if (lid < BLOCK) {
      float sum = 0.0;
      for (uint c = 0u; c < LPK; ++c) sum += part[lid * LPK + c];
      sc[lid] = lid < nb ? sum * pc.scale : NEG;
    }
    barrier();
    float mb = mx;  // over the whole block (NEG past its keys): a constant count, every read issued at once
    [[unroll]] for (uint j = 0u; j < BLOCK; ++j) mb = max(mb, sc[j]);
    if (lid < nb) ps[lid] = exp(sc[lid] - mb);
    barrier();
    // The block's sums first, then into the running totals (as attention_flash.comp).
    float lb = 0.0, ab[DPI];
    [[unroll]] for (uint r = 0u; r < DPI; ++r) ab[r] = 0.0;
    if (PV_FULL != 0u) {
      [[unroll]] for (uint j = 0u; j < BLOCK; ++j) {
        const bool live = j < nb;
        const float pj = ps[min(j, nb - 1u)];
        const uint kj = b0 + min(j, nb - 1u);  // a key of the block: its value is finite, and weighted out
        lb += live ? pj : 0.0;
        [[unroll]] for (uint r = 0u; r < DPI; ++r) {
          const uint d = lid + r * WG;
          const float v = d < D ? (kj == pc.kv_len ? vs[d] : vr[j * DPI + r]) : 0.0;
          ab[r] += live ? pj * v : 0.0;
        }
      }
    } else {
      for (uint j = 0u; j < nb; ++j) {
        const float pj = ps[j];
        const uint kj = b0 + j;
        lb += pj;
        [[unroll]] for (uint r = 0u; r < DPI; ++r) {
          const uint d = lid + r * WG;
          if (d < D) ab[r] += pj * (kj == pc.kv_len ? vs[d] : vc[kj * W + kv + d]);
        }
      }
    }
    const float alpha = exp(mx - mb);
    mx = mb;
    l = l * alpha + lb;
    [[unroll]] for (uint r = 0u; r < DPI; ++r) acc[r] = acc[r] * alpha + ab[r];
    if (b0 + BLOCK < k1) load_block(b0 + BLOCK, k1, key, lane, W, kv, kr, vr);  // uniform
  }

  [[unroll]] for (uint r = 0u; r < DPI; ++r) {
    const uint d = lid + r * WG;
    if (d >= D) continue;
    if (pc.splits == 1u) o[n * D + d] = acc[r] / l / (1.0 + exp(-xg[r]));
    else o[g * (D + 2u) + d] = acc[r];  // g = n * splits + s: attention_merge.comp's row-major partials
  }
  if (pc.splits > 1u && lid == 0u) {
    o[g * (D + 2u) + D] = mx;
    o[g * (D + 2u) + D + 1u] = l;
  }
  if (pc.splits == 1u || (DIAG & 8u) != 0u) return;  // uniform
  // The head's last split to finish merges: o = sum_s O_s e^(m_s - M) / sum_s l_s e^(m_s - M) * sigmoid(gate).
  memoryBarrierBuffer();
  barrier();
  if (lid == 0u) ticket = atomicAdd(tickets[n], 1u);
  barrier();
  if (ticket + 1u != pc.splits) return;  // uniform
  memoryBarrierBuffer();
  const uint base = n * pc.splits * (D + 2u), RS = D + 2u;
  // M and L: invocation lid takes splits lid, lid + WG, ... (independent loads, online), subgroups combine theirs, every
  // invocation the subgroups' (one barrier), not a loop of dependent reads.
  float ml = NEG, ll = 0.0, m0 = NEG;  // m0: the max of split lid (the only one where splits <= WG)
  for (uint j = lid; j < pc.splits; j += WG) {
    const float mj = o[base + j * RS + D], lj = o[base + j * RS + D + 1u], mn = max(ml, mj);
    ll = ll * exp(ml - mn) + lj * exp(mj - mn);
    ml = mn;
    if (j == lid) m0 = mj;
  }
  const float msg = subgroupMax(ml);
  const float lsg = subgroupAdd(ll * exp(ml - msg));
  if (subgroupElect()) red[gl_SubgroupID] = vec2(msg, lsg);
  barrier();
  float M = NEG, L = 0.0;
  for (uint i = 0u; i < hl_num_subgroups(); ++i) M = max(M, red[i].x);
  for (uint i = 0u; i < hl_num_subgroups(); ++i) L += red[i].y * exp(red[i].x - M);
  // The splits' weights e^(m_s - M) through shared memory, WG splits at a time; their rows read 8 splits per step
  // (a constant count: the loads issued together).
  float a[DPI];
  [[unroll]] for (uint r = 0u; r < DPI; ++r) a[r] = 0.0;
  for (uint c0 = 0u; c0 < pc.splits; c0 += WG) {  // uniform
    const uint j = c0 + lid;
    const float mj = c0 == 0u ? m0 : j < pc.splits ? o[base + j * RS + D] : NEG;
    barrier();  // the chunk before read
    part[lid] = exp(mj - M);
    barrier();
    const uint cn = min(WG, pc.splits - c0);
    for (uint jj = 0u; jj < cn; jj += 8u)
      [[unroll]] for (uint u = 0u; u < 8u; ++u) {
        if (jj + u >= cn) continue;
        const float w = part[jj + u];
        [[unroll]] for (uint r = 0u; r < DPI; ++r) {
          const uint d = lid + r * WG;
          if (d < D) a[r] += o[base + (c0 + jj + u) * RS + d] * w;
        }
      }
  }
  [[unroll]] for (uint r = 0u; r < DPI; ++r) {
    const uint d = lid + r * WG;
    if (d < D) of[n * D + d] = a[r] / L / (1.0 + exp(-xg[r]));
  }
  if (lid == 0u) tickets[n] = 0u;
}
