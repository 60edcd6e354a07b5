// attention (vulkan:tiled), prompt chunks: causal GQA softmax attention over the KV cache (k, v already
// appended), output times sigmoid(gate), with query tiles. The query rows that share KV head m are
// i = t * G + h (token t, query head n = m * G + h, G = n_q / n_kv); a workgroup takes R consecutive such
// rows (several tokens x all G heads), so every K/V row it stages in shared memory serves R queries
// instead of one. It walks the keys of split s, [s * split_keys, ...) up to its last row's position, BC
// keys at a time:
//   K tile -> shared; scores S[R][BC] (invocation (row group, key), NS rows each, vec4 dot products);
//   online softmax per row (max, p = exp(s - max) with masked keys p = 0, rescale alpha) by R invocations;
//   V tile -> shared (over K's space); O[R][D] = O * alpha + P V, each invocation NR rows x ND vec4 dims,
//   summed over the block first and then into the running totals (as attention_flash.comp).
// One split: o = O / l * sigmoid(gate). Several: partials [O (D), max, sum] per (query row, split) in
// attention_flash.comp's layout, for attention_merge.comp. Head dims are padded to vec4s with zeros.
#version 450
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;
layout(constant_id = 1) const uint D = 256;  // head dim
layout(constant_id = 2) const uint R = 16;   // query rows per workgroup
layout(constant_id = 3) const uint BC = 8;   // keys per step, a power of two <= WG
layout(constant_id = 4) const uint NS = 2;   // score rows per invocation: ceil(R / (WG / BC))
layout(constant_id = 5) const uint DL = 64;  // invocations along the head dim: min(WG, DV)
layout(constant_id = 6) const uint ND = 1;   // vec4 dims per invocation: ceil(DV / DL)
layout(constant_id = 7) const uint NR = 16;  // output rows per invocation: ceil(R / (WG / DL))
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer KC { float kc[]; };
layout(std430, binding = 2) readonly buffer VC { float vc[]; };
layout(std430, binding = 3) readonly buffer Gate { float gate[]; };
layout(std430, binding = 4) writeonly buffer O { float o[]; };
layout(push_constant) uniform Push {
  uint T, n_q, group;  // tokens; query heads; query heads per KV head (G)
  uint kv_len;         // cached rows before this chunk
  uint tiles;          // ceil(T * G / R): row tiles per KV head
  uint splits, split_keys;
  float scale;         // 1 / sqrt(D)
} pc;

const uint DV = (D + 3u) / 4u;  // vec4s per head row
const uint RS = WG / BC;        // score row groups
const uint RG = WG / DL;        // output row groups
const float NEG = -1e30;        // a finite "minus infinity" (as attention_flash.comp)

shared vec4 qs[R * DV];
shared vec4 kv[BC * DV];  // the K tile, then the V tile
shared float ps[R * BC];  // scores, then probabilities
shared float ms[R], ls[R], alphas[R];

// Stages cache rows [b0, b0 + n) of this KV head (keys or values) into kv as zero-padded vec4 rows: each invocation's
// values loaded first (a constant trip count, so every load is in flight at once), then stored.
const uint SKV = (BC * DV * 4u + WG - 1u) / WG;
void stage_kv(uint b0, uint n, uint col, bool values) {
  float x[SKV];
  [[unroll]] for (uint j = 0u; j < SKV; ++j) {
    const uint i = gl_LocalInvocationID.x + j * WG, c = i / (DV * 4u), d = i - c * DV * 4u;
    const uint src = (b0 + c) * (pc.n_q / pc.group) * D + col + d;
    x[j] = i < BC * DV * 4u && c < n && d < D ? (values ? vc[src] : kc[src]) : 0.0;
  }
  [[unroll]] for (uint j = 0u; j < SKV; ++j) {
    const uint i = gl_LocalInvocationID.x + j * WG, c = i / (DV * 4u), d = i - c * DV * 4u;
    if (i < BC * DV * 4u) kv[c * DV + d / 4u][d % 4u] = x[j];
  }
}

// Query row i of KV head m: token i / G, query head m * G + i % G; the offset of its q/gate/o row.
uint qrow(uint m, uint i) { return ((i / pc.group) * pc.n_q + m * pc.group + i % pc.group) * D; }

void main() {
  const uint g = hl_group_index();
  if (g >= (pc.n_q / pc.group) * pc.tiles * pc.splits) return;  // uniform per workgroup
  const uint s = g % pc.splits, tile = (g / pc.splits) % pc.tiles, m = g / (pc.splits * pc.tiles);
  const uint lid = gl_LocalInvocationID.x, rows = pc.T * pc.group, i0 = tile * R;
  const uint last = min(i0 + R, rows) - 1u;  // the tile's last query row: the latest position
  const uint k0 = s * pc.split_keys, k1 = min(k0 + pc.split_keys, pc.kv_len + last / pc.group + 1u);
  const uint col = m * D;  // this KV head's cache columns

  for (uint i = lid; i < R * DV * 4u; i += WG) {
    const uint r = i / (DV * 4u), d = i - r * DV * 4u;
    qs[r * DV + d / 4u][d % 4u] = i0 + r < rows && d < D ? q[qrow(m, i0 + r) + d] : 0.0;
  }
  for (uint r = lid; r < R; r += WG) {
    ms[r] = NEG;
    ls[r] = 0.0;
  }
  const uint sc = lid % BC, sr = lid / BC;       // scores: key, row group
  const uint od = lid % DL, orow = lid / DL;     // outputs: vec4 dim, row group
  vec4 acc[NR * ND];
  for (uint j = 0u; j < NR * ND; ++j) acc[j] = vec4(0.0);

  for (uint b0 = k0; b0 < k1; b0 += BC) {  // uniform: k0, k1 depend on the workgroup only
    const uint nb = min(BC, k1 - b0);
    barrier();  // q staged / the previous block's V and P consumed
    stage_kv(b0, nb, col, false);
    barrier();
    float dot4[NS];
    for (uint j = 0u; j < NS; ++j) dot4[j] = 0.0;
    for (uint v = 0u; v < DV; ++v) {
      const vec4 kvv = kv[sc * DV + v];
      for (uint j = 0u; j < NS; ++j) {
        const uint r = sr + j * RS;
        if (r < R) dot4[j] += dot(qs[r * DV + v], kvv);
      }
    }
    for (uint j = 0u; j < NS; ++j) {
      const uint r = sr + j * RS;
      if (r < R) ps[r * BC + sc] = dot4[j] * pc.scale;
    }
    barrier();
    for (uint r = lid; r < R; r += WG) {
      const uint pos = pc.kv_len + (i0 + r) / pc.group;  // keys <= pos are visible to row r
      const uint nv = pos < b0 ? 0u : min(nb, pos - b0 + 1u);
      float mb = ms[r];
      for (uint c = 0u; c < nv; ++c) mb = max(mb, ps[r * BC + c]);
      float lb = 0.0;
      for (uint c = 0u; c < BC; ++c) {
        const float p = c < nv ? exp(ps[r * BC + c] - mb) : 0.0;
        ps[r * BC + c] = p;
        lb += p;
      }
      alphas[r] = exp(ms[r] - mb);  // rescales what earlier blocks accumulated
      ls[r] = ls[r] * alphas[r] + lb;
      ms[r] = mb;
    }
    barrier();  // scores read: K's space takes V
    stage_kv(b0, nb, col, true);
    barrier();
    if (orow < RG) {
      vec4 ab[NR * ND];
      for (uint j = 0u; j < NR * ND; ++j) ab[j] = vec4(0.0);
      for (uint c = 0u; c < BC; ++c)
        for (uint jd = 0u; jd < ND; ++jd) {
          const uint v = od + jd * DL;
          const vec4 vv = v < DV ? kv[c * DV + v] : vec4(0.0);
          for (uint j = 0u; j < NR; ++j) {
            const uint r = orow + j * RG;
            if (r < R) ab[j * ND + jd] += ps[r * BC + c] * vv;
          }
        }
      for (uint j = 0u; j < NR; ++j) {
        const uint r = orow + j * RG;
        if (r < R)
          for (uint jd = 0u; jd < ND; ++jd) acc[j * ND + jd] = acc[j * ND + jd] * alphas[r] + ab[j * ND + jd];
      }
    }
  }
  barrier();  // ms, ls final

  if (orow < RG)
    for (uint j = 0u; j < NR; ++j) {
      const uint r = orow + j * RG;
      if (r >= R || i0 + r >= rows) continue;
      const uint qo = qrow(m, i0 + r), t = (i0 + r) / pc.group, n = m * pc.group + (i0 + r) % pc.group;
      const uint base = ((t * pc.n_q + n) * pc.splits + s) * (D + 2u);  // partials (splits > 1)
      for (uint jd = 0u; jd < ND; ++jd)
        for (uint c = 0u; c < 4u; ++c) {
          const uint d = (od + jd * DL) * 4u + c;
          if (d >= D) continue;
          const float a = acc[j * ND + jd][c];
          if (pc.splits == 1u) o[qo + d] = a / ls[r] / (1.0 + exp(-gate[qo + d]));
          else o[base + d] = a;
        }
      if (pc.splits > 1u && od == 0u) {
        o[base + D] = ms[r];
        o[base + D + 1u] = ls[r];
      }
    }
}
