// attention (vulkan:flash and vulkan:decode_split; with splits > 1 the first of two passes): causal GQA softmax
// attention over the KV cache (k, v already appended), output times sigmoid(gate).
// One workgroup per (query row = t * n_q + n, key split s); it walks its keys [s * split_keys, ...) up to
// position kv_len + t in blocks of BLOCK keys with an online softmax:
//   scores:  WG / BLOCK consecutive lanes per key, each a strided share of the D dims (coalesced reads),
//            partial dot products summed through shared memory;
//   softmax: every invocation takes the block max from shared memory (identical order -> identical
//            value everywhere), BLOCK invocations write p_j = exp(s_j - max);
//   output:  each invocation owns head dims lid, lid + WG, ... (DPI of them): acc = acc * alpha + sum p_j v_j.
// With one split the workgroup writes o = acc / l * sigmoid(gate); otherwise it writes [acc (D), max, sum]
// for attention_merge.comp.
#version 450
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint D = 256;     // head dim
layout(constant_id = 2) const uint DPI = 2;     // head dims per invocation, ceil(D / WG)
layout(constant_id = 3) const uint BLOCK = 32;  // keys per step; a power of two <= WG (divides WG)
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer KC { float kc[]; };
layout(std430, binding = 2) readonly buffer VC { float vc[]; };
layout(std430, binding = 3) readonly buffer Gate { float gate[]; };
layout(std430, binding = 4) writeonly buffer O { float o[]; };
layout(push_constant) uniform Push {
  uint rows;        // T * n_q
  uint n_q, group;  // query heads; query heads per KV head
  uint kv_len;      // cached rows before this chunk
  uint splits, split_keys;
  float scale;      // 1 / sqrt(D)
} pc;

const uint LPK = WG / BLOCK;  // lanes per key while scoring
const uint DPL = (D + LPK - 1u) / LPK;  // head dims per lane while scoring
const float NEG = -1e30;      // a finite "minus infinity": exp(NEG - m) is 0 without inf arithmetic

shared float qs[D];
shared float part[WG];
shared float sc[BLOCK];
shared float ps[BLOCK];

void main() {
  const uint g = hl_group_index();
  const uint row = g / pc.splits, s = g - row * pc.splits;
  if (row >= pc.rows) return;  // uniform per workgroup
  const uint lid = gl_LocalInvocationID.x;
  const uint t = row / pc.n_q, n = row - t * pc.n_q;
  const uint W = pc.n_q / pc.group * D;   // cache row width, n_kv * D
  const uint kv = (n / pc.group) * D;     // this head's KV columns
  const uint k0 = s * pc.split_keys;
  const uint k1 = min(k0 + pc.split_keys, pc.kv_len + t + 1u);  // causal: up to this token's position

  for (uint d = lid; d < D; d += WG) qs[d] = q[row * D + d];
  barrier();

  const uint key = lid / LPK, lane = lid - key * LPK;
  float m = NEG, l = 0.0, acc[DPI];
  for (uint r = 0u; r < DPI; ++r) acc[r] = 0.0;
  for (uint b0 = k0; b0 < k1; b0 += BLOCK) {  // uniform: k0, k1 depend on the workgroup only
    const uint nb = min(BLOCK, k1 - b0);
    float dot = 0.0;
    if (key < nb) {
      const uint kr = (b0 + key) * W + kv;
      [[unroll]] for (uint i = 0u; i < DPL; ++i) {  // a constant trip count: the row's loads issued together
        const uint d = lane + i * LPK;
        if (d < D) dot += qs[d] * kc[kr + d];
      }
    }
    part[lid] = dot;
    barrier();
    if (lid < nb) {
      float sum = 0.0;
      for (uint c = 0u; c < LPK; ++c) sum += part[lid * LPK + c];
      sc[lid] = sum * pc.scale;
    }
    barrier();
    float mb = m;
    for (uint j = 0u; j < nb; ++j) mb = max(mb, sc[j]);
    if (lid < nb) ps[lid] = exp(sc[lid] - mb);
    barrier();
    // Sums over the block first, then into the running totals (two-level summation: the rounding error
    // grows with BLOCK + keys / BLOCK, not with the context length).
    float lb = 0.0, ab[DPI];
    for (uint r = 0u; r < DPI; ++r) ab[r] = 0.0;
    for (uint j = 0u; j < nb; ++j) {
      const float pj = ps[j];
      const uint vr = (b0 + j) * W + kv;
      lb += pj;
      for (uint r = 0u; r < DPI; ++r) {
        const uint d = lid + r * WG;
        if (d < D) ab[r] += pj * vc[vr + d];
      }
    }
    const float alpha = exp(m - mb);  // rescales what earlier blocks accumulated
    m = mb;
    l = l * alpha + lb;
    for (uint r = 0u; r < DPI; ++r) acc[r] = acc[r] * alpha + ab[r];
    // The next block writes part, sc, ps only after its first two barriers: no barrier needed here.
  }

  if (pc.splits == 1u) {
    for (uint r = 0u; r < DPI; ++r) {
      const uint d = lid + r * WG;
      if (d < D) o[row * D + d] = acc[r] / l / (1.0 + exp(-gate[row * D + d]));
    }
  } else {
    const uint base = g * (D + 2u);  // g = row * splits + s
    for (uint r = 0u; r < DPI; ++r) {
      const uint d = lid + r * WG;
      if (d < D) o[base + d] = acc[r];
    }
    if (lid == 0u) {
      o[base + D] = m;
      o[base + D + 1u] = l;
    }
  }
}
