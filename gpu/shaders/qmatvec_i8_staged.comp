// matmul / lm_head (vulkan:qmatvec_i8_staged): y[T, N] = x[T, K] wq[N, K]^T for decode, w in ggml blocks
// (Q4_K, Q5_K, Q6_K, Q8_0), x as 8-bit integers (quantize_x8.comp), products by 4-way integer dot products
// (quant_slots.glsl), like qmatvec_i8, but with the weight stream read as the memory system wants it.
//
// Why: qmatvec_i8's lanes read their slots straight from memory, 2-byte aligned words scattered over the
// row (Q6_K blocks are 210 bytes), and reload x for every row: on the H200 the L1 requests, not the bytes,
// bound it (Q6_K lm_head 217 us, 43% of the read ceiling). Here a workgroup walks tiles of ROWS consecutive
// rows (one contiguous span of bytes) grid-stride; every invocation loads its share of the tiles DEPTH
// strides ahead as aligned 16-byte loads into registers while the subgroups decode the current tile from
// shared memory, so DEPTH tiles per workgroup stay in flight (the bytes in flight set the bandwidth). Each lane always takes the same slots of a row (C lanes per row, C the next
// power of two of the slots over SPL, at most the subgroup), so for one token its x stays in registers for the
// whole kernel (XR slots per lane; more, or more tokens, read x from memory). Any subgroup size works.
#version 450
#extension GL_KHR_shader_subgroup_shuffle : require
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const uint TYPE = 14;  // ggml type id
layout(constant_id = 2) const uint ROWS = 8;   // rows per tile
layout(constant_id = 3) const uint STAGE = 1;  // uvec4s a tile takes: >= (ROWS * row_bytes + 15) / 16 + 1
layout(constant_id = 4) const uint XR = 1;     // slots of x a lane keeps in registers
layout(constant_id = 5) const uint SPL = 1;    // slots per lane asked for: fewer lanes per row, rows in parallel
layout(constant_id = 6) const uint DEPTH = 1;  // tiles each workgroup has in flight (loads issued ahead)
#include "common.glsl"

layout(std430, binding = 0) readonly buffer XQ { uvec4 xq4[]; };  // [T, K / 16]: 16 int8 values each
layout(std430, binding = 1) readonly buffer XD { float xd[]; };   // [T, K / 32]: scale per 32 values
layout(std430, binding = 2) readonly buffer XS { float xs[]; };   // [T, K / 16]: scale * sum(q) per 16
layout(std430, binding = 3) readonly buffer W { uvec4 w4[]; };    // raw rows (whole uvec4s plus a spare)
layout(std430, binding = 4) writeonly buffer Y { float y[]; };    // [T, N]
layout(push_constant) uniform Push { uint T, K, N, row_bytes, slots, slots_p2, tiles; } pc;

shared uvec4 stage[STAGE];
#define HLQ_WORD(buf, i) stage[(i) >> 2u][(i) & 3u]
#include "quant_blocks.glsl"
#include "quant_slots.glsl"

const uint PF = (STAGE + WG - 1u) / WG;  // uvec4s each invocation carries per tile

// Per invocation: the DEPTH tiles in flight (tile d of a round in pf[d * PF ..]), and x for its slots.
uvec4 pf[DEPTH * PF];
uvec4 rq[4u * XR];
vec4 rd[XR], rs[XR];
uint C, R, cl, sub;  // lanes per row, rows per subgroup, this lane's place among a row's lanes, its row
bool resident;       // x in registers: one token and every slot of the lane held

// x's runs for slot s of token t.
void x_slot(uint t, uint s, out uvec4 q[4], out vec4 d, out vec4 sq) {
  const uvec4 st = hlq_slot_starts(s) >> 4u;
  const uint x16 = t * (pc.K >> 4u);
  for (uint r = 0u; r < 4u; ++r) {
    q[r] = xq4[x16 + st[r]];
    d[r] = xd[(x16 + st[r]) >> 1u];
    sq[r] = xs[x16 + st[r]];
  }
}

// Unit i of a tile's bytes, counted from the 16-byte unit holding its first byte (zero past its end).
uvec4 tile_load(uint tile, uint i) {
  if (tile >= pc.tiles) return uvec4(0u);
  const uint row0 = tile * ROWS, first = row0 * pc.row_bytes, base = first >> 4u;
  const uint n16 = ((first + min(ROWS, pc.N - row0) * pc.row_bytes + 15u) >> 4u) - base;
  return i < n16 ? w4[base + i] : uvec4(0u);
}

// Decode the tile in shared memory: each subgroup R rows at a time, C lanes per row.
void decode_tile(uint tile) {
  const uint row0 = tile * ROWS, rows = min(ROWS, pc.N - row0), skew = (row0 * pc.row_bytes) & 15u;
  for (uint r0 = gl_SubgroupID * R; r0 < rows; r0 += hl_num_subgroups() * R) {  // uniform per subgroup
    const uint r = min(r0 + sub, rows - 1u), at = skew + r * pc.row_bytes;
    for (uint t = 0u; t < pc.T; ++t) {
      float acc = 0.0;
      if (resident) {
        for (uint i = 0u; i < XR; ++i) {
          const uint s = cl + C * i;
          if (s >= pc.slots) break;
          uvec4 q[4];
          vec4 mul, off;
          hlq_slot(at, s, q, mul, off);
          acc += hlq_slot_dot(q, mul, off, uvec4[4](rq[4u * i], rq[4u * i + 1u], rq[4u * i + 2u], rq[4u * i + 3u]),
                              rd[i], rs[i]);
        }
      } else {
        for (uint s = cl; s < pc.slots; s += C) {
          uvec4 q[4], xq[4];
          vec4 mul, off, d, sq;
          hlq_slot(at, s, q, mul, off);
          x_slot(t, s, xq, d, sq);
          acc += hlq_slot_dot(q, mul, off, xq, d, sq);
        }
      }
      for (uint o = C >> 1u; o > 0u; o >>= 1u) acc += subgroupShuffleXor(acc, o);
      if (cl == 0u && r0 + sub < rows) y[t * pc.N + row0 + r] = acc;
    }
  }
}

void main() {
  // Lanes per row C (a power of two for the shuffles) and rows per subgroup R: a lane's SPL slots are
  // independent chains of loads and products, the subgroup's R rows too.
  C = min(gl_SubgroupSize, max(1u, pc.slots_p2 >> findMSB(SPL)));
  R = gl_SubgroupSize / C;
  cl = gl_SubgroupInvocationID % C;
  sub = gl_SubgroupInvocationID / C;
  resident = pc.T == 1u && pc.slots <= C * XR;  // uniform
  if (resident)
    for (uint i = 0u; i < XR; ++i) {
      uvec4 q[4];
      x_slot(0u, min(cl + C * i, pc.slots - 1u), q, rd[i], rs[i]);
      for (uint r = 0u; r < 4u; ++r) rq[4u * i + r] = q[r];
    }

  // Rounds of DEPTH tiles (the inner loop unrolled, so pf is indexed by constants): a tile's registers
  // go to shared memory, are refilled with the tile DEPTH strides ahead, and the tile is decoded.
  const uint stride = gl_NumWorkGroups.x * gl_NumWorkGroups.y, lid = gl_LocalInvocationID.x;
  uint tile = hl_group_index();
  for (uint d = 0u; d < DEPTH; ++d)
    for (uint k = 0u; k < PF; ++k) pf[d * PF + k] = tile_load(tile + d * stride, k * WG + lid);
  while (tile < pc.tiles) {  // uniform per workgroup
    for (uint d = 0u; d < DEPTH; ++d, tile += stride) {
      if (tile >= pc.tiles) break;
      barrier();  // the previous tile is decoded
      for (uint k = 0u; k < PF; ++k)
        if (k * WG + lid < STAGE) stage[k * WG + lid] = pf[d * PF + k];
      barrier();
      for (uint k = 0u; k < PF; ++k) pf[d * PF + k] = tile_load(tile + DEPTH * stride, k * WG + lid);
      decode_tile(tile);
    }
  }
}
