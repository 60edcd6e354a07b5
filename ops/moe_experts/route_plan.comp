// moe_experts (vulkan:route_pack), stages 2 and 3 in one workgroup (tunable moe_experts.route_pack.plan 1): what
// route_count.comp (counts), route_offsets.comp (offsets, tile list) and route_count.comp again (packed rows) write,
// without the two dependent dispatches between them; a prompt chunk has few entries (T * k: 4096 at T = 512).
//   counts: one integer atomic per entry on its expert's counter (the sums do not depend on arrival order);
//   offsets[e], tiles[e]: exclusive prefix sums over experts of the counts and of their row tiles, as route_offsets;
//   rows: CHUNK entries at a time, one bit per entry in a per-expert mask (as route_count's blocks), each entry's
//     packed row its expert's next free row plus the set bits below it; then every expert's next free row moves past
//     the chunk's. Within an expert the rows stay in (token, slot) order: bit for bit the three-dispatch result.
// Expert ids outside [0, E) are clamped, as in route_count.comp.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const uint E = 8;        // experts
layout(constant_id = 2) const uint CHUNK = 256;  // entries per placement pass, a multiple of 32
#include "common.glsl"
#extension GL_KHR_memory_scope_semantics : require  // workgroup-scoped atomics (Device scope is not enabled)

layout(std430, binding = 0) readonly buffer Ex { int expert[]; };     // [N = T * k]
layout(std430, binding = 1) writeonly buffer Off { int offsets[]; };  // [E + 1]
layout(std430, binding = 2) writeonly buffer Tiles { int tiles[]; };  // [E + 1]
layout(std430, binding = 3) writeonly buffer Rows { int rows[]; };    // [N] packed entry ids
layout(push_constant) uniform Push { uint N, tile_rows; } pc;

const uint WORDS = CHUNK / 32u;
shared uint mask[E * WORDS];
shared uint next[E];  // the counts, then each expert's next free packed row
shared uint rsum[WG], tsum[WG];

uint expert_of(uint i) { return uint(clamp(expert[i], 0, int(E) - 1)); }

void main() {
  const uint lid = gl_LocalInvocationID.x;
  for (uint e = lid; e < E; e += WG) next[e] = 0u;
  barrier();
  for (uint i = lid; i < pc.N; i += WG) atomicAdd(next[expert_of(i)], 1u, gl_ScopeWorkgroup, 0, gl_SemanticsRelaxed);
  barrier();

  // Each invocation owns a contiguous run of experts; a scan over the invocations gives each run its start.
  const uint run = hl_div_up(E, WG), e0 = min(E, lid * run), e1 = min(E, e0 + run);
  uint r = 0u, t = 0u;
  for (uint e = e0; e < e1; ++e) {
    r += next[e];
    t += hl_div_up(next[e], pc.tile_rows);
  }
  rsum[lid] = r;
  tsum[lid] = t;
  barrier();
  for (uint s = 1u; s < WG; s <<= 1) {  // inclusive Hillis-Steele scan of the runs' sums
    const uint ra = lid >= s ? rsum[lid - s] : 0u, ta = lid >= s ? tsum[lid - s] : 0u;
    barrier();
    rsum[lid] += ra;
    tsum[lid] += ta;
    barrier();
  }
  r = rsum[lid] - r;  // exclusive: where this run starts
  t = tsum[lid] - t;
  for (uint e = e0; e < e1; ++e) {
    const uint c = next[e];
    offsets[e] = int(r);
    tiles[e] = int(t);
    next[e] = r;
    r += c;
    t += hl_div_up(c, pc.tile_rows);
  }
  if (lid == WG - 1u) {
    offsets[E] = int(rsum[lid]);
    tiles[E] = int(tsum[lid]);
  }

  for (uint c0 = 0u; c0 < pc.N; c0 += CHUNK) {
    const uint n = min(CHUNK, pc.N - c0);
    for (uint w = lid; w < E * WORDS; w += WG) mask[w] = 0u;
    barrier();  // also: next[] final for this chunk
    for (uint l = lid; l < n; l += WG)
      atomicOr(mask[expert_of(c0 + l) * WORDS + l / 32u], 1u << (l % 32u), gl_ScopeWorkgroup, 0, gl_SemanticsRelaxed);
    barrier();
    for (uint l = lid; l < n; l += WG) {
      const uint e = expert_of(c0 + l), w = l / 32u;
      uint rank = uint(bitCount(mask[e * WORDS + w] & ((1u << (l % 32u)) - 1u)));
      for (uint v = 0u; v < w; ++v) rank += uint(bitCount(mask[e * WORDS + v]));
      rows[next[e] + rank] = int(c0 + l);
    }
    barrier();  // every entry placed from next[] before it moves
    for (uint e = lid; e < E; e += WG) {
      uint c = 0u;
      for (uint w = 0u; w < WORDS; ++w) c += uint(bitCount(mask[e * WORDS + w]));
      next[e] += c;
    }
    barrier();  // the masks read before the next chunk clears them
  }
}
