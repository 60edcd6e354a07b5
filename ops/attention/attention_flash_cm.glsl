// attention (vulkan:flash_coopmat), prompt chunks: causal GQA softmax attention over the KV cache (k, v already
// appended), output times sigmoid(gate), with S = Q K^T and O += P V on cooperative matrices (16x16x16
// f16 x f16 + f32 over a subgroup; coopmat.glsl). Work split as attention_tiled.comp: the query rows of KV
// head m are i = t * G + h (token t, query head m * G + h); a workgroup takes BM consecutive rows and walks the
// keys of split s, [s * split_keys, ...) up to its last row's position, BK keys at a time:
//   K tile -> shared as f16 (zero past the range); S blocks (16 x 16, depth D) by the NSG computing subgroups
//     round robin, stored to ss (f32);
//   per row (split over TPR invocations, partials through shared memory): the new max over its visible keys
//     (causal: key <= kv_len + t); it moves only when the tile's max exceeds it by more than TAU = MARGIN (so
//     p = exp(s - m) <= e^TAU, inside f16 for TAU <= 10), so that the accumulators are rescaled only in the
//     few tiles where a row's max jumps; alpha = exp(m_old - m_new); meanwhile the V tile replaces K;
//   P = exp(S * scale - m) (0 where masked) rounded to f16; row sums l = l * alpha + sum P (of the rounded P,
//     the weights P V uses);
//   O: subgroup s owns the 16 x 16 output blocks s * NACC .. s * NACC + NACC - 1 (row block b / (D / 16),
//     column block b % (D / 16)), NACC accumulators; where a block's rows have alpha != 1 it goes through the
//     subgroup's 16 x 16 f32 scratch (rows scaled) and back; then O += P V over the tile's 16-key steps.
// One split: o = O / l * sigmoid(gate). Several: partials [O (D), m, l] per (query row, split) in
// attention_flash.comp's layout, for attention_merge.comp; none for a split past the tile's last key. D a multiple of 16 (the host checks).
// The host sizes the workgroup as NSG subgroups of the device's largest subgroup size, full subgroups
// required; any extra subgroups (smaller actual size) only stage tiles and run the softmax. Branches around
// cooperative-matrix operations are subgroup-uniform.
// Shared layouts (row strides keep every row on 16 bytes, as the matrix loads require; the f16 arrays are arrays of
// f16vec4, so staging stores and matrix loads move whole vectors: matrix offsets and strides in 4-value units):
//   qs[r * QP + d]  Q rows (f16): A of S, row-major;
//   kv[c * QP + d]  K tile (f16): B (d, c) of S, column-major; then the V tile: B (c, d) of P V, row-major;
//   ss[r * SP + c]  S (f32); after the softmax, subgroup s's scratch at ss[s * 256 ..] (16 x 16, row-major);
//   ps[r * PP + c]  P (f16): A of P V, row-major.
// Included by attention_flash_cm.comp (cooperative matrices) and attention_flash_cm_emul.comp (HL_CM_EMULATE).
#ifndef HL_ATTENTION_FLASH_CM_GLSL
#define HL_ATTENTION_FLASH_CM_GLSL
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;   // NSG * the largest subgroup size
layout(constant_id = 1) const uint D = 256;    // head dim, a multiple of 16
layout(constant_id = 2) const uint BM = 32;    // query rows per workgroup, a multiple of 16
layout(constant_id = 3) const uint BK = 32;    // keys per tile, a multiple of 16
layout(constant_id = 4) const uint NSG = 4;    // computing subgroups
layout(constant_id = 5) const uint NACC = 8;   // output blocks per subgroup: ceil((BM / 16) (D / 16) / NSG)
layout(constant_id = 6) const uint MARGIN = 8; // a row's max moves only past this margin (log units; TAU)
layout(constant_id = 7) const uint F16KV = 0;  // 1: bindings 1, 2 hold the cache rows as f16 (attention_kv_f16.comp)
layout(constant_id = 8) const uint EARLY_V = 1;  // 1: a tile's V loads issued with its K loads (load_kv)
#include "common.glsl"
#define HL_CM_VEC 4u
#include "coopmat.glsl"

layout(std430, binding = 0) readonly buffer Q { vec4 q[]; };
layout(std430, binding = 1) readonly buffer KC { vec4 kc[]; };
layout(std430, binding = 2) readonly buffer VC { vec4 vc[]; };
layout(std430, binding = 1) readonly buffer KH { uvec2 kh[]; };  // F16KV: 4 halves per element
layout(std430, binding = 2) readonly buffer VH { uvec2 vh[]; };
layout(std430, binding = 3) readonly buffer Gate { float gate[]; };
layout(std430, binding = 4) writeonly buffer O { float o[]; };
layout(push_constant) uniform Push {
  uint T, n_q, group;  // tokens; query heads; query heads per KV head (G)
  uint kv_len;         // cached rows before this chunk
  uint tiles;          // ceil(T * G / BM): row tiles per KV head
  uint splits, split_keys;
  float scale;         // 1 / sqrt(D)
} pc;

const uint QP = D + 8u;                         // f16 row stride of qs and kv
const uint SP = BK + 4u;                        // f32 row stride of S
const uint PP = BK + 8u;                        // f16 row stride of P
const uint DB = D / 16u;                        // column blocks of O
const uint NOB = (BM / 16u) * DB;               // output blocks
const uint SB = (BM / 16u) * (BK / 16u);        // score blocks
const uint SSN = BM * SP > NSG * 256u ? BM * SP : NSG * 256u;
const uint TPR = WG > BM ? WG / BM : 1u;        // softmax invocations per row
const uint CPT = (BK + TPR - 1u) / TPR;         // columns of a tile per softmax invocation
const float NEG = -1e30;  // a finite "minus infinity" (as attention_flash.comp)

shared f16vec4 qs[BM * QP / 4u];
shared f16vec4 kv[BK * QP / 4u];
shared float ss[SSN];
shared f16vec4 ps[BM * PP / 4u];
shared float ms[BM], ls[BM], alphas[BM], mx[BM];
shared float pm[BM * TPR], psum[BM * TPR];  // partial row maxima and sums of the softmax

#ifdef HL_CM_EMULATE
const uint HL_CM_ID_qs = 0u, HL_CM_ID_kv = 1u, HL_CM_ID_ps = 2u;
float hl_cm_read(uint id, uint i) {
  const f16vec4 x = id == 0u ? qs[i / 4u] : id == 1u ? kv[i / 4u] : ps[i / 4u];
  return float(x[i % 4u]);
}
#endif

// A K or V tile: cache rows [b0, b0 + n) of this KV head, zero rows past n. load_kv takes each invocation's SKV vec4s
// into registers (a constant trip count: every load in flight at once, not a round trip per vec4), store_kv writes
// them to kv as f16; with EARLY_V the V tile's loads are issued with the K tile's and fly during S and the softmax.
const uint SKV = (BK * (D / 4u) + WG - 1u) / WG;
void load_kv(uint b0, uint n, uint col4, bool values, out vec4 x[SKV]) {
  const uint D4 = D / 4u, W4 = (pc.n_q / pc.group) * D4;
  [[unroll]] for (uint j = 0u; j < SKV; ++j) {
    const uint i = gl_LocalInvocationID.x + j * WG, c = i / D4, src = (b0 + c) * W4 + col4 + (i - c * D4);
    x[j] = vec4(0.0);
    if (i < BK * D4 && c < n) {
      if (F16KV == 1u) {
        const uvec2 w = values ? vh[src] : kh[src];
        x[j] = vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));  // f16 values: exact back to f16
      } else {
        x[j] = values ? vc[src] : kc[src];
      }
    }
  }
}
void store_kv(vec4 x[SKV]) {
  const uint D4 = D / 4u;
  [[unroll]] for (uint j = 0u; j < SKV; ++j) {
    const uint i = gl_LocalInvocationID.x + j * WG, c = i / D4, d4 = i - c * D4;
    if (i < BK * D4)
      kv[c * (QP / 4u) + d4] = f16vec4(x[j]);
  }
}

// Keys of the tile [b0, b0 + nb) visible to query row i (of `rows`): keys <= kv_len + its token (causal).
uint visible(uint i, uint b0, uint nb, uint rows) {
  const uint pos = pc.kv_len + i / pc.group;
  return i >= rows || pos < b0 ? 0u : min(nb, pos - b0 + 1u);
}

// Query row i of KV head m: token i / G, query head m * G + i % G; the offset of its q/gate/o row.
uint qrow(uint m, uint i) { return ((i / pc.group) * pc.n_q + m * pc.group + i % pc.group) * D; }

void main() {
  const uint g = hl_group_index();
  if (g >= (pc.n_q / pc.group) * pc.tiles * pc.splits) return;  // uniform per workgroup
  const uint s = g % pc.splits, tile = (g / pc.splits) % pc.tiles, m = g / (pc.splits * pc.tiles);
  const uint lid = gl_LocalInvocationID.x, rows = pc.T * pc.group, i0 = tile * BM;
  const uint last = min(i0 + BM, rows) - 1u;  // the tile's last query row: the latest position
  const uint k0 = s * pc.split_keys, k1 = min(k0 + pc.split_keys, pc.kv_len + last / pc.group + 1u);
  if (k0 >= k1) return;  // uniform: a split past the tile's last key (causal) has nothing; the merge skips it
  const uint col4 = m * D / 4u;  // this KV head's cache columns (vec4s)
  const float TAU = float(MARGIN);

  {  // Q rows as f16, every load in flight at once (a constant trip count)
    const uint SQ = (BM * (D / 4u) + WG - 1u) / WG;
    vec4 x[SQ];
    [[unroll]] for (uint j = 0u; j < SQ; ++j) {
      const uint i = lid + j * WG, r = i / (D / 4u);
      x[j] = i < BM * (D / 4u) && i0 + r < rows ? q[qrow(m, i0 + r) / 4u + i - r * (D / 4u)] : vec4(0.0);
    }
    [[unroll]] for (uint j = 0u; j < SQ; ++j) {
      const uint i = lid + j * WG, r = i / (D / 4u), d4 = i - r * (D / 4u);
      if (i < BM * (D / 4u))
        qs[r * (QP / 4u) + d4] = f16vec4(x[j]);
    }
  }
  for (uint r = lid; r < BM; r += WG) {
    ms[r] = NEG;
    ls[r] = 0.0;
  }
  const uint sg = gl_SubgroupID, sl = gl_SubgroupInvocationID;
  const bool computes = sg < NSG;  // subgroup-uniform
  const uint scr = sg * 256u;      // this subgroup's scratch in ss (16 x 16 f32)
  hl_cm_acc acc[NACC];
  [[unroll]] for (uint j = 0u; j < NACC; ++j) acc[j] = hl_cm_fill(0.0);

  for (uint b0 = k0; b0 < k1; b0 += BK) {  // uniform: k0, k1 depend on the workgroup only
    const uint nb = min(BK, k1 - b0);
    vec4 xk[SKV], xv[SKV];
    load_kv(b0, nb, col4, false, xk);
    if (EARLY_V != 0u) load_kv(b0, nb, col4, true, xv);
    barrier();  // Q staged / the previous tile's P, V and scratch consumed
    store_kv(xk);
    barrier();
    if (computes)
      for (uint b = sg; b < SB; b += NSG) {
        const uint rb = b / (BK / 16u), cb = b - rb * (BK / 16u);
        hl_cm_acc sacc = hl_cm_fill(0.0);
        [[unroll]] for (uint d = 0u; d < D; d += HL_CM) {
          hl_cm_a am;
          hl_cm_b bm;
          HL_CM_LOAD_A(am, qs, (rb * 16u * QP + d) / 4u, HL_CM_ROW_MAJOR, QP / 4u);
          HL_CM_LOAD_B(bm, kv, (cb * 16u * QP + d) / 4u, HL_CM_COL_MAJOR, QP / 4u);
          sacc = hl_cm_muladd(am, bm, sacc);
        }
        HL_CM_STORE(ss, rb * 16u * SP + cb * 16u, sacc, HL_CM_ROW_MAJOR, SP);
      }
    barrier();  // S stored, K consumed
    // Softmax rows are split over TPR invocations each ((row, part): columns part, part + TPR, ...), their
    // partial maxima and sums combined through shared memory.
    for (uint i = lid; i < BM * TPR; i += WG) {
      const uint r = i / TPR, nv = visible(i0 + r, b0, nb, rows);
      float mb = NEG;
      [[unroll]] for (uint t = 0u; t < CPT; ++t) {  // a constant count: the reads issued together
        const uint c = i - r * TPR + t * TPR;
        if (c < nv) mb = max(mb, ss[r * SP + c] * pc.scale);
      }
      pm[i] = mb;
    }
    if (EARLY_V == 0u) load_kv(b0, nb, col4, true, xv);
    store_kv(xv);
    barrier();  // partial maxima known, V staged
    for (uint i = lid; i < BM * TPR; i += WG) {
      const uint r = i / TPR, part = i - r * TPR, nv = visible(i0 + r, b0, nb, rows);
      float mb = NEG;
      for (uint k = 0u; k < TPR; ++k) mb = max(mb, pm[r * TPR + k]);
      const float mo = ms[r], mn = mb > mo + TAU ? mb : mo;
      float lb = 0.0;
      [[unroll]] for (uint t = 0u; t < CPT; ++t) {
        const uint c = part + t * TPR;
        if (c < BK) {
          const float16_t p = float16_t(c < nv ? exp(ss[r * SP + c] * pc.scale - mn) : 0.0);
          ps[(r * PP + c) / 4u][c % 4u] = p;
          lb += float(p);  // the rounded weights that P V uses
        }
      }
      psum[i] = lb;
      if (part == 0u) {  // ms[r] stays the old max until every part has read it
        alphas[r] = exp(mo - mn);  // exactly 1 where the max stays
        mx[r] = mn;
      }
    }
    barrier();  // P written, S consumed (ss becomes scratch)
    for (uint r = lid; r < BM; r += WG) {
      float lb = 0.0;
      for (uint k = 0u; k < TPR; ++k) lb += psum[r * TPR + k];
      ls[r] = ls[r] * alphas[r] + lb;
      ms[r] = mx[r];
    }
    if (computes) {
      [[unroll]] for (uint j = 0u; j < NACC; ++j) {
        const uint b = sg * NACC + j, rb = b / DB;
        if (b >= NOB) continue;
        uint moved = 0u;  // the 16 reads independent (a short-circuit || waits on each before the next)
        [[unroll]] for (uint r = 0u; r < 16u; ++r) moved |= alphas[rb * 16u + r] != 1.0 ? 1u : 0u;
        if (moved != 0u) {  // uniform: every invocation read the same values
          HL_CM_STORE(ss, scr, acc[j], HL_CM_ROW_MAJOR, 16u);
          subgroupBarrier();
          for (uint e = sl; e < 256u; e += gl_SubgroupSize) ss[scr + e] *= alphas[rb * 16u + e / 16u];
          subgroupBarrier();
          HL_CM_LOAD_ACC(acc[j], ss, scr, HL_CM_ROW_MAJOR, 16u);
          subgroupBarrier();  // loaded before the next block's store
        }
      }
      for (uint c = 0u; c < nb; c += HL_CM) {
        [[unroll]] for (uint j = 0u; j < NACC; ++j) {
          const uint b = sg * NACC + j, rb = b / DB, cb = b - rb * DB;
          if (b >= NOB) continue;
          hl_cm_a am;
          hl_cm_b bm;
          HL_CM_LOAD_A(am, ps, (rb * 16u * PP + c) / 4u, HL_CM_ROW_MAJOR, PP / 4u);
          HL_CM_LOAD_B(bm, kv, (c * QP + cb * 16u) / 4u, HL_CM_ROW_MAJOR, QP / 4u);
          acc[j] = hl_cm_muladd(am, bm, acc[j]);
        }
      }
    }
  }
  barrier();  // ls final; the scratch free

  if (computes)
    [[unroll]] for (uint j = 0u; j < NACC; ++j) {
      const uint b = sg * NACC + j, rb = b / DB, cb = b - rb * DB;
      if (b >= NOB) continue;
      HL_CM_STORE(ss, scr, acc[j], HL_CM_ROW_MAJOR, 16u);
      subgroupBarrier();
      for (uint e = sl; e < 256u; e += gl_SubgroupSize) {
        const uint r = rb * 16u + e / 16u, d = cb * 16u + e % 16u;
        if (i0 + r >= rows) continue;
        const uint qo = qrow(m, i0 + r), t = (i0 + r) / pc.group, n = m * pc.group + (i0 + r) % pc.group;
        const uint base = ((t * pc.n_q + n) * pc.splits + s) * (D + 2u);  // partials (splits > 1)
        if (pc.splits == 1u) o[qo + d] = ss[scr + e] / ls[r] / (1.0 + exp(-gate[qo + d]));
        else {
          o[base + d] = ss[scr + e];
          if (d == 0u) {
            o[base + D] = ms[r];
            o[base + D + 1u] = ls[r];
          }
        }
      }
      subgroupBarrier();  // read before the next block's store
    }
}

#endif
