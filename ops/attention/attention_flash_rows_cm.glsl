// attention (vulkan:flash_rows), prompt chunks: causal GQA softmax attention over the KV cache and this chunk's k, v
// (which the kernel appends to the caches: split 0's workgroups, each its tokens' rows of its KV head; the tiles read
// this chunk's keys from k, v, never from the rows being written), output times sigmoid(gate), on cooperative
// matrices (16x16x16 f16 x f16 + f32; coopmat.glsl), with each subgroup owning 16 query rows whole (the split of
// FlashAttention-2): its Q in registers (16 x D as D / 16 A matrices), its S, softmax, P and O (D / 16 accumulators)
// its own, so that nothing but the K/V tile is shared and a key tile costs two workgroup barriers (staged; consumed).
// Rows as attention_flash_cm.glsl's: query row i of KV head m is token i / G, query head m * G + i % G; a workgroup
// takes BM = 16 NSG consecutive rows and walks the keys of split s, [s * split_keys, ...) up to its last row's
// position, BK keys at a time:
//   K and V tiles -> shared as f16 (zero past the range), loaded together (PREFETCH: the next tile's loads
//     issued before this tile's products, in flight during them);
//   each subgroup whose rows see keys of the tile: S = Q K^T (16 x BK) stored to its f32 scratch; per row (over
//     the subgroup's lanes, partials by shuffles) the new max over its visible keys (causal: key <= kv_len + t),
//     moved only past MARGIN (as attention_flash_cm.glsl: p <= e^MARGIN inside f16, the accumulators rescaled
//     only where a row's max jumps), P = exp(S * scale - m) rounded to f16 (0 where masked), l = l * alpha + sum P
//     (of the rounded P); the accumulators rescaled through the scratch where a row's alpha != 1 (never on the
//     split's first tile: they are still zero); O += P V over the tile's 16-key steps.
// One split: o = O / l * sigmoid(gate). Several: partials [O (D), m, l] per (query row, split) in
// attention_flash.comp's layout, for attention_merge.comp; none for a split past the tile's last key.
// The host sizes the workgroup as NSG subgroups of the device's largest subgroup size, full subgroups required;
// subgroups past NSG (a smaller actual size) stage tiles only. Branches around cooperative-matrix operations are
// subgroup-uniform.
// Shared layouts (rows on 16 bytes, as matrix loads require; f16 arrays of f16vec4, offsets and strides in vectors):
//   kvs[c * QP + d]         K tile (f16): B (d, c) of S, column-major; V tile at KV4: B (c, d) of P V, row-major;
//                           first, Q rows (2 BK per pass) on their way into the subgroups' registers;
//   ss[sg * 16 SP + r SP + c]  subgroup sg's S (f32), then its 16 x 16 scratch (stride 16);
//   ps[sg * 16 PP + r PP + c]  its P (f16): A of P V, row-major.
// Included by attention_flash_rows_cm.comp and attention_flash_rows_cm_emul.comp (HL_CM_EMULATE: Q's matrices then
// read q in place, rounded to f16, instead of registers).
#ifndef HL_ATTENTION_FLASH_ROWS_CM_GLSL
#define HL_ATTENTION_FLASH_ROWS_CM_GLSL
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_vote : require
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;    // NSG * the largest subgroup size
layout(constant_id = 1) const uint D = 256;     // head dim, a multiple of 16
layout(constant_id = 2) const uint BK = 32;     // keys per tile, a multiple of 16
layout(constant_id = 3) const uint NSG = 4;     // subgroups owning rows: 16 NSG query rows per workgroup
layout(constant_id = 4) const uint MARGIN = 8;  // a row's max moves only past this margin (log units)
layout(constant_id = 5) const uint PREFETCH = 0;  // 1: the next K/V tile's loads in flight during this one's products
layout(constant_id = 6) const uint S_CHAINS = 1;  // 2: each S block summed over D in two independent chains (even, odd)
#include "common.glsl"
#define HL_CM_VEC 4u
#include "coopmat.glsl"
// Loops over Q's matrices and O's blocks: unrolled on real matrices (registers), not emulated
// (lavapipe's compile time).
#ifdef HL_CM_EMULATE
#define HL_UNROLL [[dont_unroll]]
#else
#define HL_UNROLL [[unroll]]
#endif

layout(std430, binding = 0) readonly buffer Q { vec4 q[]; };
layout(std430, binding = 1) buffer KC { vec4 kc[]; };  // the caches: rows < kv_len read, this chunk's rows written
layout(std430, binding = 2) buffer VC { vec4 vc[]; };
layout(std430, binding = 3) readonly buffer Gate { float gate[]; };
layout(std430, binding = 4) writeonly buffer O { float o[]; };
layout(std430, binding = 5) readonly buffer KN { vec4 kn[]; };  // this chunk's k, v [T, W]: keys kv_len + t
layout(std430, binding = 6) readonly buffer VN { vec4 vn[]; };
layout(push_constant) uniform Push {
  uint T, n_q, group;  // tokens; query heads; query heads per KV head (G)
  uint kv_len;         // cached rows before this chunk
  uint tiles;          // ceil(T * G / BM): row tiles per KV head
  uint splits, split_keys;
  float scale;         // 1 / sqrt(D)
} pc;

const uint BM = 16u * NSG;
const uint QP = D + 8u;      // f16 row stride of K, V (and staged Q)
const uint SP = BK + 4u;     // f32 row stride of S (>= 16: the 16 x 16 scratch fits 16 rows)
const uint PP = BK + 8u;     // f16 row stride of P
const uint DB = D / 16u;     // column blocks of O, and Q's A matrices
const uint KV4 = BK * QP / 4u;
const float NEG = -1e30;     // a finite "minus infinity" (as attention_flash.comp)

shared f16vec4 kvs[2u * KV4];
shared float ss[NSG * 16u * SP];
shared f16vec4 ps[NSG * 16u * PP / 4u];
shared float rmax[BM], rsum[BM], ralpha[BM];

// Query row i of KV head m: token i / G, query head m * G + i % G; the offset of its q/gate/o row.
uint qrow(uint m, uint i) { return ((i / pc.group) * pc.n_q + m * pc.group + i % pc.group) * D; }

#ifdef HL_CM_EMULATE
const uint HL_CM_ID_q = 0u, HL_CM_ID_kvs = 1u, HL_CM_ID_ps = 2u;
uint emu_row0, emu_head;  // Q's matrices: element r * D + d is q's row emu_row0 + r of KV head emu_head
float hl_cm_read(uint id, uint i) {
  if (id == HL_CM_ID_q) {
    const uint r = emu_row0 + i / D;
    return r < pc.T * pc.group ? float(float16_t(q[(qrow(emu_head, r) + i % D) / 4u][i % 4u])) : 0.0;
  }
  const f16vec4 x = id == HL_CM_ID_kvs ? kvs[i / 4u] : ps[i / 4u];
  return float(x[i % 4u]);
}
#endif

// The K and V tiles of keys [b0, b0 + n) of this KV head into registers, zero past n (a constant trip count:
// every load in flight at once): cached keys from the caches, this chunk's from k, v (which the kernel appends);
// store_tile writes them to kvs as f16.
const uint SKV = (BK * (D / 4u) + WG - 1u) / WG;
void load_tile(uint b0, uint n, uint col4, out vec4 xk[SKV], out vec4 xv[SKV]) {
  const uint D4 = D / 4u, W4 = (pc.n_q / pc.group) * D4;
  [[unroll]] for (uint j = 0u; j < SKV; ++j) {
    const uint i = gl_LocalInvocationID.x + j * WG, c = i / D4, key = b0 + c, d4 = col4 + (i - c * D4);
    xk[j] = vec4(0.0);
    xv[j] = vec4(0.0);
    if (i < BK * D4 && c < n) {
      if (key < pc.kv_len) {
        xk[j] = kc[key * W4 + d4];
        xv[j] = vc[key * W4 + d4];
      } else {
        xk[j] = kn[(key - pc.kv_len) * W4 + d4];
        xv[j] = vn[(key - pc.kv_len) * W4 + d4];
      }
    }
  }
}
void store_tile(vec4 xk[SKV], vec4 xv[SKV]) {
  const uint D4 = D / 4u;
  [[unroll]] for (uint j = 0u; j < SKV; ++j) {
    const uint i = gl_LocalInvocationID.x + j * WG, c = i / D4, d4 = i - c * D4;
    if (i < BK * D4) {
      kvs[c * (QP / 4u) + d4] = f16vec4(xk[j]);
      kvs[KV4 + c * (QP / 4u) + d4] = f16vec4(xv[j]);
    }
  }
}

#ifndef HL_CM_EMULATE
// Query rows [r0, r0 + 2 BK) of KV head m (zero past `rows`) into registers, every load in flight at once.
const uint SQ = (2u * BK * (D / 4u) + WG - 1u) / WG;
void load_q(uint m, uint r0, uint rows, out vec4 x[SQ]) {
  [[unroll]] for (uint j = 0u; j < SQ; ++j) {
    const uint i = gl_LocalInvocationID.x + j * WG, r = i / (D / 4u);
    x[j] = i < 2u * BK * (D / 4u) && r0 + r < rows ? q[qrow(m, r0 + r) / 4u + i - r * (D / 4u)] : vec4(0.0);
  }
}
#endif

// Keys of the tile [b0, b0 + nb) visible to query row i (of `rows`): keys <= kv_len + its token (causal).
uint visible(uint i, uint b0, uint nb, uint rows) {
  const uint pos = pc.kv_len + i / pc.group;
  return i >= rows || pos < b0 ? 0u : min(nb, pos - b0 + 1u);
}

void main() {
  const uint g = hl_group_index();
  if (g >= (pc.n_q / pc.group) * pc.tiles * pc.splits) return;  // uniform per workgroup
  const uint s = g % pc.splits, tile = (g / pc.splits) % pc.tiles, m = g / (pc.splits * pc.tiles);
  const uint lid = gl_LocalInvocationID.x, rows = pc.T * pc.group, i0 = tile * BM;
  const uint last = min(i0 + BM, rows) - 1u;  // the tile's last query row: the latest position
  const uint k0 = s * pc.split_keys, k1 = min(k0 + pc.split_keys, pc.kv_len + last / pc.group + 1u);
  const uint col4 = m * D / 4u;
  if (s == 0u) {  // the append: this KV head's k, v of the tile's tokens to cache rows kv_len + t (a token shared by two
                  // tiles is written twice, the same values)
    const uint D4 = D / 4u, W4 = (pc.n_q / pc.group) * D4, t0 = i0 / pc.group, nt = last / pc.group - t0 + 1u;
    for (uint i = lid; i < nt * D4; i += WG) {
      const uint t = t0 + i / D4, src = t * W4 + col4 + i % D4, dst = (pc.kv_len + t) * W4 + col4 + i % D4;
      kc[dst] = kn[src];
      vc[dst] = vn[src];
    }
  }
  if (k0 >= k1) return;  // uniform: a split past the tile's last key (causal) has nothing; the merge skips it
  const float TAU = float(MARGIN);
  const uint sg = gl_SubgroupID, sl = gl_SubgroupInvocationID;
  const uint r0 = i0 + 16u * sg;            // this subgroup's first query row
  const bool owns = sg < NSG && r0 < rows;  // subgroup-uniform
  // The end of the keys this subgroup's rows see in the split (its last row's position + 1).
  const uint sk1 = owns ? min(k1, pc.kv_len + min(r0 + 15u, rows - 1u) / pc.group + 1u) : 0u;
  const uint sb = sg * 16u * SP, pb = sg * 16u * PP;  // this subgroup's S / scratch and P (elements)
  const uint LPR = gl_SubgroupSize >= 16u ? gl_SubgroupSize / 16u : 1u;  // lanes per softmax row

  hl_cm_a qa[DB];
#ifdef HL_CM_EMULATE
  emu_row0 = r0;
  emu_head = m;
  HL_UNROLL for (uint j = 0u; j < DB; ++j) qa[j] = uvec4(HL_CM_ID_q, j * 16u, HL_CM_ROW_MAJOR, D);
#else
  // Q rows as f16 through kvs, 2 BK rows per pass, into the registers of the subgroups that own them; each pass's
  // loads in flight during the previous pass's matrix loads.
  vec4 x[SQ];
  load_q(m, i0, rows, x);
  for (uint p0 = 0u; p0 < BM; p0 += 2u * BK) {  // uniform
    barrier();  // the previous pass's rows loaded into registers
    [[unroll]] for (uint j = 0u; j < SQ; ++j) {
      const uint i = lid + j * WG, r = i / (D / 4u);
      if (i < 2u * BK * (D / 4u)) kvs[r * (QP / 4u) + i - r * (D / 4u)] = f16vec4(x[j]);
    }
    if (p0 + 2u * BK < BM) load_q(m, i0 + p0 + 2u * BK, rows, x);
    barrier();
    if (owns && 16u * sg >= p0 && 16u * sg < p0 + 2u * BK)
      HL_UNROLL for (uint j = 0u; j < DB; ++j)
        HL_CM_LOAD_A(qa[j], kvs, ((16u * sg - p0) * QP + j * 16u) / 4u, HL_CM_ROW_MAJOR, QP / 4u);
  }
#endif
  for (uint r = lid; r < BM; r += WG) {
    rmax[r] = NEG;
    rsum[r] = 0.0;
  }
  hl_cm_acc acc[DB];
  HL_UNROLL for (uint j = 0u; j < DB; ++j) acc[j] = hl_cm_fill(0.0);

  vec4 xk[SKV], xv[SKV];
  if (PREFETCH != 0u) load_tile(k0, min(BK, k1 - k0), col4, xk, xv);
  for (uint b0 = k0; b0 < k1; b0 += BK) {  // uniform: k0, k1 depend on the workgroup only
    const uint nb = min(BK, k1 - b0);
    if (PREFETCH == 0u) load_tile(b0, nb, col4, xk, xv);
    barrier();  // the previous tile (or Q's staging) consumed; the row state initialised
    store_tile(xk, xv);
    barrier();
    if (PREFETCH != 0u && b0 + BK < k1) load_tile(b0 + BK, min(BK, k1 - b0 - BK), col4, xk, xv);
    if (b0 < sk1) {  // subgroup-uniform: some of its rows see this tile's keys
      [[unroll]] for (uint cb = 0u; cb < BK / 16u; ++cb) {  // S = Q K^T, 16 x BK
        hl_cm_acc sacc = hl_cm_fill(0.0);
        hl_cm_acc sodd = hl_cm_fill(0.0);
        HL_UNROLL for (uint j = 0u; j < DB; ++j) {
          hl_cm_b bm;
          HL_CM_LOAD_B(bm, kvs, (cb * 16u * QP + j * 16u) / 4u, HL_CM_COL_MAJOR, QP / 4u);
          if (S_CHAINS == 2u && j % 2u == 1u) sodd = hl_cm_muladd(qa[j], bm, sodd);
          else sacc = hl_cm_muladd(qa[j], bm, sacc);
        }
        if (S_CHAINS == 2u) HL_CM_ADD(sacc, sodd);
        HL_CM_STORE(ss, sb + cb * 16u, sacc, HL_CM_ROW_MAJOR, SP);
      }
      subgroupBarrier();
      // The softmax: row r over LPR lanes (columns part, part + LPR, ...), combined by shuffles; a uniform trip
      // count (two passes of 8 rows where subgroups have 8 lanes).
      bool moved = false;
      for (uint e = sl; e < 16u * LPR; e += gl_SubgroupSize) {
        const uint r = e / LPR, part = e - r * LPR, nv = visible(r0 + r, b0, nb, rows);
        float mb = NEG;
        for (uint c = part; c < BK; c += LPR)
          if (c < nv) mb = max(mb, ss[sb + r * SP + c] * pc.scale);
        for (uint x = 1u; x < LPR; x <<= 1) mb = max(mb, subgroupShuffleXor(mb, x));
        const float mo = rmax[16u * sg + r], mn = mb > mo + TAU ? mb : mo;
        float lb = 0.0;
        for (uint c = part; c < BK; c += LPR) {
          const float16_t p = float16_t(c < nv ? exp(ss[sb + r * SP + c] * pc.scale - mn) : 0.0);
          ps[(pb + r * PP + c) / 4u][c % 4u] = p;
          lb += float(p);  // the rounded weights that P V uses
        }
        for (uint x = 1u; x < LPR; x <<= 1) lb += subgroupShuffleXor(lb, x);
        const float alpha = exp(mo - mn);  // exactly 1 where the max stays
        moved = moved || alpha != 1.0;
        if (part == 0u) {  // after the shuffles: every lane of the row has read rmax
          rsum[16u * sg + r] = rsum[16u * sg + r] * alpha + lb;
          rmax[16u * sg + r] = mn;
          ralpha[16u * sg + r] = alpha;
        }
      }
      const bool rescale = subgroupAny(moved) && b0 != k0;  // the split's first tile: the accumulators are zero
      subgroupBarrier();  // P and alphas written, S read (ss becomes scratch)
      if (rescale)
        HL_UNROLL for (uint j = 0u; j < DB; ++j) {
          HL_CM_STORE(ss, sb, acc[j], HL_CM_ROW_MAJOR, 16u);
          subgroupBarrier();
          for (uint e = sl; e < 256u; e += gl_SubgroupSize) ss[sb + e] *= ralpha[16u * sg + e / 16u];
          subgroupBarrier();
          HL_CM_LOAD_ACC(acc[j], ss, sb, HL_CM_ROW_MAJOR, 16u);
          subgroupBarrier();  // loaded before the next block's store
        }
      for (uint c = 0u; c < nb; c += 16u) {  // O += P V
        hl_cm_a pa;
        HL_CM_LOAD_A(pa, ps, (pb + c) / 4u, HL_CM_ROW_MAJOR, PP / 4u);
        HL_UNROLL for (uint j = 0u; j < DB; ++j) {
          hl_cm_b bm;
          HL_CM_LOAD_B(bm, kvs, KV4 + (c * QP + j * 16u) / 4u, HL_CM_ROW_MAJOR, QP / 4u);
          acc[j] = hl_cm_muladd(pa, bm, acc[j]);
        }
      }
    }
  }
  if (!owns) return;  // subgroup-uniform; no barrier follows
  subgroupBarrier();  // rsum, rmax final (each row's first lane wrote them)
  // This lane's elements of every 16 x 16 block: e = lane + k * subgroup size (row e / 16, column e % 16), the same
  // rows in every block, so their output offsets and scales are worked out once.
  const uint EPL = 256u / gl_SubgroupSize;
  uint off[32];
  float scl[32];
  for (uint k = 0u; k < EPL; ++k) {
    const uint e = sl + k * gl_SubgroupSize, r = e / 16u, i = min(r0 + r, rows - 1u);
    const uint t = i / pc.group, n = m * pc.group + i % pc.group;
    off[k] = pc.splits == 1u ? qrow(m, i) : ((t * pc.n_q + n) * pc.splits + s) * (D + 2u);
    scl[k] = 1.0 / rsum[16u * sg + r];
    if (pc.splits > 1u && e % 16u == 0u && r0 + r < rows) {  // the partial's max and sum
      o[off[k] + D] = rmax[16u * sg + r];
      o[off[k] + D + 1u] = rsum[16u * sg + r];
    }
  }
  HL_UNROLL for (uint j = 0u; j < DB; ++j) {
    HL_CM_STORE(ss, sb, acc[j], HL_CM_ROW_MAJOR, 16u);
    subgroupBarrier();
    for (uint k = 0u; k < EPL; ++k) {
      const uint e = sl + k * gl_SubgroupSize, d = j * 16u + e % 16u;
      if (r0 + e / 16u >= rows) continue;
      if (pc.splits == 1u) o[off[k] + d] = ss[sb + e] * scl[k] / (1.0 + exp(-gate[off[k] + d]));
      else o[off[k] + d] = ss[sb + e];
    }
    subgroupBarrier();  // read before the next block's store
  }
}

#endif
