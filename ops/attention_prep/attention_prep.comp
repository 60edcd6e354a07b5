// attention_prep (vulkan:fused): a prompt chunk's q, gate and k for the attention, one pass. GROUP invocations per head
// (a row's n_q query heads, then its n_kv key heads) and WG / GROUP heads per workgroup, as rmsnorm.comp: each
// invocation loads its values i = li + j GROUP of the head (and, for a query head, the gate's), the head's sum of
// squares by hl_group_sum, then the NeoX rotation of pairs (i, i + R/2), i < R/2: GROUP divides R/2, so an invocation
// holds both values of each of its pairs in registers (j and j + RJ) and needs no shared memory. Angles as rope.comp's
// (64-bit fixed point reduction, rope_angle.glsl).
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint GROUP = 32;  // a power of two dividing WG and R / 2
layout(constant_id = 2) const uint GC = 256;    // D, the head dim: the loops' trip count a constant
layout(constant_id = 3) const uint RJ = 1;      // R / (2 GROUP): the rotated pairs per invocation
#include "common.glsl"
#include "group_sum.glsl"
#include "rope_angle.glsl"

layout(std430, binding = 0) readonly buffer QG { float qg[]; };  // [T, n_q 2D]
layout(std430, binding = 1) readonly buffer K { float k[]; };    // [T, n_kv D]
layout(std430, binding = 2) readonly buffer QN { float q_norm[]; };
layout(std430, binding = 3) readonly buffer KN { float k_norm[]; };
layout(std430, binding = 4) readonly buffer Freq { uvec2 freq[]; };  // F_i as (low, high) 32-bit words
layout(std430, binding = 5) writeonly buffer QO { float q_out[]; };
layout(std430, binding = 6) writeonly buffer GO { float gate_out[]; };
layout(std430, binding = 7) writeonly buffer KO { float k_out[]; };
layout(push_constant) uniform Push {
  uint groups;  // T (n_q + n_kv)
  uint nq, nkv;
  uint pos0;
  float eps;
} pc;

const uint NV = (GC + GROUP - 1u) / GROUP;  // values per invocation

void main() {
  const uint L = hl_role(), grp = hl_group_index() * (WG / GROUP) + L / GROUP, li = L % GROUP;
  const bool live = grp < pc.groups;  // no early return: hl_group_sum may need the whole workgroup
  const uint heads = pc.nq + pc.nkv, t = live ? grp / heads : 0u, h = grp - t * heads;
  const bool is_q = h < pc.nq;  // uniform per group
  const uint src = is_q ? (t * pc.nq + h) * 2u * GC : (t * pc.nkv + h - pc.nq) * GC;
  const uint dst = is_q ? (t * pc.nq + h) * GC : (t * pc.nkv + h - pc.nq) * GC;
  float v[NV], g[NV], gt[NV];  // every load first (unrolled, all in flight together)
  for (uint j = 0u; j < NV; ++j) {
    const uint i = li + j * GROUP;
    const bool in_ = live && i < GC;
    v[j] = in_ ? (is_q ? qg[src + i] : k[src + i]) : 0.0;
    g[j] = in_ ? (is_q ? q_norm[i] : k_norm[i]) : 0.0;
    gt[j] = in_ && is_q ? qg[src + GC + i] : 0.0;
  }
  float s = 0.0;
  for (uint j = 0u; j < NV; ++j) s += v[j] * v[j];
  const float inv = 1.0 / sqrt(hl_group_sum(s, L) / float(GC) + pc.eps);
  for (uint j = 0u; j < NV; ++j) v[j] = v[j] * inv * g[j];
  const uint p = pc.pos0 + t;
  for (uint j = 0u; j < RJ; ++j) {  // pair (li + j GROUP, li + (j + RJ) GROUP)
    const float ang = hl_rope_angle(p, freq[li + j * GROUP]);
    const float c = cos(ang), sn = sin(ang), a = v[j], b = v[j + RJ];
    v[j] = a * c - b * sn;
    v[j + RJ] = b * c + a * sn;
  }
  for (uint j = 0u; j < NV; ++j) {
    const uint i = li + j * GROUP;
    if (!live || i >= GC) continue;
    if (is_q) {
      q_out[dst + i] = v[j];
      gate_out[dst + i] = gt[j];
    } else {
      k_out[dst + i] = v[j];
    }
  }
}
