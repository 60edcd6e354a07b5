// moe_experts (vulkan:route_pack), stages 2 and 3b: bins the routes' entries i = t * k + j (token t, slot
// j) by expert, in blocks of BLOCK consecutive entries, one workgroup per block. Each workgroup sets one
// bit per entry in a per-expert mask of the block (integer atomicOr: the result does not depend on
// arrival order), then
//   PLACE == 0 (stage 2, counts): writes the block's entry count per expert, bcount[b, e] = popcount(mask[e]);
//   PLACE == 1 (stage 3b, packing): writes rows[boff[b, e] + rank] = i, where rank = the set bits of mask[e]
//     below entry i. boff comes from route_offsets.comp, so every expert's entries end up contiguous, in
//     (token, slot) order: deterministic, and idle experts get no rows at all.
// Expert ids outside [0, E) are clamped (never an out-of-bounds access), as in moe_gate_up.comp.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;
layout(constant_id = 1) const uint E = 8;        // experts
layout(constant_id = 2) const uint BLOCK = 256;  // entries per workgroup, a multiple of 32
layout(constant_id = 3) const uint PLACE = 0;
#include "common.glsl"
#extension GL_KHR_memory_scope_semantics : require  // workgroup-scoped atomics (Device scope is not enabled)

layout(std430, binding = 0) readonly buffer Ex { int expert[]; };  // [N = T * k]
layout(std430, binding = 1) buffer Bins { int bins[]; };           // PLACE 0: bcount [blocks, E] (out); 1: boff (in)
layout(std430, binding = 2) writeonly buffer Rows { int rows[]; };  // PLACE 1: [N] packed entry ids
layout(push_constant) uniform Push { uint N, blocks; } pc;

const uint WORDS = BLOCK / 32u;
shared uint mask[E * WORDS];

uint expert_of(uint i) { return uint(clamp(expert[i], 0, int(E) - 1)); }

void main() {
  const uint b = hl_group_index();
  if (b >= pc.blocks) return;  // uniform per workgroup
  const uint lid = gl_LocalInvocationID.x, i0 = b * BLOCK, n = min(BLOCK, pc.N - i0);
  for (uint w = lid; w < E * WORDS; w += WG) mask[w] = 0u;
  barrier();
  for (uint l = lid; l < n; l += WG)
    atomicOr(mask[expert_of(i0 + l) * WORDS + l / 32u], 1u << (l % 32u), gl_ScopeWorkgroup, 0, gl_SemanticsRelaxed);
  barrier();
  if (PLACE == 0u) {
    for (uint e = lid; e < E; e += WG) {
      uint c = 0u;
      for (uint w = 0u; w < WORDS; ++w) c += uint(bitCount(mask[e * WORDS + w]));
      bins[b * E + e] = int(c);
    }
  } else {
    for (uint l = lid; l < n; l += WG) {
      const uint e = expert_of(i0 + l), w = l / 32u;
      uint rank = uint(bitCount(mask[e * WORDS + w] & ((1u << (l % 32u)) - 1u)));
      for (uint v = 0u; v < w; ++v) rank += uint(bitCount(mask[e * WORDS + v]));
      rows[uint(bins[b * E + e]) + rank] = int(i0 + l);
    }
  }
}
