// moe_experts (vulkan:route_pack), stage 3a: exclusive prefix sums over experts of the block counts of
// route_count.comp. One workgroup; each invocation owns a contiguous run of experts and sums their
// block counts, then a shared-memory scan over the invocations gives each run its start. Writes
//   offsets[e] = first packed row of expert e (offsets[E] = T * k),
//   tiles[e]   = first row tile of expert e, tiles of TILE_ROWS rows (tiles[E] = tiles in all), the compact
//                tile list the grouped GEMM walks (an expert with no rows has no tile),
//   boff[b, e] = offsets[e] + entries of expert e in blocks before b (where route_count.comp places block b).
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Counts { int bcount[]; };  // [blocks, E]
layout(std430, binding = 1) writeonly buffer BlockOff { int boff[]; };  // [blocks, E]
layout(std430, binding = 2) writeonly buffer Off { int offsets[]; };    // [E + 1]
layout(std430, binding = 3) writeonly buffer Tiles { int tiles[]; };    // [E + 1]
layout(push_constant) uniform Push { uint E, blocks, tile_rows; } pc;

shared uint rsum[WG], tsum[WG];

uint expert_rows(uint e) {
  uint c = 0u;
  for (uint b = 0u; b < pc.blocks; ++b) c += uint(bcount[b * pc.E + e]);
  return c;
}

void main() {
  const uint lid = gl_LocalInvocationID.x, run = hl_div_up(pc.E, WG);
  const uint e0 = min(pc.E, lid * run), e1 = min(pc.E, e0 + run);
  uint r = 0u, t = 0u;
  for (uint e = e0; e < e1; ++e) {
    const uint c = expert_rows(e);
    r += c;
    t += hl_div_up(c, pc.tile_rows);
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
    const uint start = r;
    offsets[e] = int(r);
    tiles[e] = int(t);
    for (uint b = 0u; b < pc.blocks; ++b) {
      boff[b * pc.E + e] = int(r);
      r += uint(bcount[b * pc.E + e]);
    }
    t += hl_div_up(r - start, pc.tile_rows);
  }
  if (lid == WG - 1u) {
    offsets[pc.E] = int(rsum[lid]);
    tiles[pc.E] = int(tsum[lid]);
  }
}
