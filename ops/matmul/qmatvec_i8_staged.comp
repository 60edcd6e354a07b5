// matmul / lm_head (vulkan:qmatvec_i8_staged): y[T, N] = x[T, K] wq[N, K]^T for decode, w in ggml blocks
// (Q4_K, Q5_K, Q6_K, Q8_0), x as 8-bit integers (quantize_x8.comp), products by 4-way integer dot products
// (quant_slots.glsl), with the weight stream read as the memory system wants it.
//
// Why: lanes that read their slots straight from memory (the removed qmatvec_i8) load 2-byte aligned words
// scattered over the row (Q6_K blocks are 210 bytes) and reload x for every row: the L1 requests, not the bytes,
// bound that. Here a worker walks tiles of ROWS consecutive
// rows (one contiguous span of bytes) grid-stride: its invocations load their shares of the tiles DEPTH
// strides ahead as aligned 16-byte loads into registers while the current tile is decoded from shared
// memory, so DEPTH tiles per worker stay in flight (the bytes in flight set the bandwidth). A worker is the
// workgroup (LOCAL 0: workgroup barriers) or each subgroup on its own region of shared memory (LOCAL 1:
// subgroup barriers only, so subgroups never wait for each other).
// Each lane always takes the same slots of a row (C lanes per row, C the next power of two of the slots over
// SPL, at most the subgroup), so for one token its x stays in registers for the whole kernel (XR slots per
// lane; more, or more tokens, read x from memory). Any subgroup size works.
// The Hopper profile's subgroup workers on one-row tiles were its best on the lm_head; deeper staging and more
// slots per lane were slower (the matmul experiment sweeps them).
#version 450
#extension GL_KHR_shader_subgroup_shuffle : require
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const uint TYPE = 14;    // ggml type id
layout(constant_id = 2) const uint ROWS = 8;     // rows per tile
layout(constant_id = 3) const uint STAGE = 1;    // uvec4s a tile takes: >= (ROWS * row_bytes + 15) / 16 + 1
layout(constant_id = 4) const uint XR = 1;       // slots of x a lane keeps in registers
layout(constant_id = 5) const uint SPL = 1;      // slots per lane asked for: fewer lanes per row, rows in parallel
layout(constant_id = 6) const uint DEPTH = 1;    // tiles each worker has in flight (1..3)
layout(constant_id = 7) const uint LOCAL = 0;    // 1: each subgroup a worker
layout(constant_id = 8) const uint REGIONS = 1;  // tile regions in shared memory (LOCAL: >= the subgroups)
layout(constant_id = 9) const uint PF = 1;       // uvec4s an invocation carries per tile (>= STAGE / loaders)
#include "common.glsl"

layout(std430, binding = 0) readonly buffer XQ { uvec4 xq4[]; };  // [T, K / 16]: 16 int8 values each
layout(std430, binding = 1) readonly buffer XD { float xd[]; };   // [T, K / 32]: scale per 32 values
layout(std430, binding = 2) readonly buffer XS { float xs[]; };   // [T, K / 16]: scale * sum(q) per 16
layout(std430, binding = 3) readonly buffer W { uvec4 w4[]; };    // raw rows (whole uvec4s plus a spare)
layout(std430, binding = 4) writeonly buffer Y { float y[]; };    // [T, N]
layout(push_constant) uniform Push { uint T, K, N, row_bytes, slots, slots_p2, tiles; } pc;

// Words, not uvec4s: a word picked out of a shared uvec4 by a run-time index costs a 16-byte read.
shared uint stage[4u * STAGE * REGIONS];
uint region;  // this worker's first word in stage
#define HLQ_WORD(buf, i) stage[region + (i)]
#include "quant_blocks.glsl"
#include "quant_slots.glsl"

// Per invocation: the DEPTH tiles in flight (tile d of a round in pf[d * PF ..]), and x for its slots.
uvec4 pf[DEPTH * PF];
uvec4 rq[4u * XR];
vec4 rd[XR], rs[XR];
uint C, R, cl, sub;        // lanes per row, rows per subgroup, this lane's place among a row's lanes, its row
bool resident;             // x in registers: one token and every slot of the lane held
uint loader, loaders;      // this invocation among the worker's, and their count
uint first_row, row_step;  // the rows of a tile this subgroup decodes: first_row + k * row_step
uint tile_stride;          // workers in the grid

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

void sync_worker() {
  if (LOCAL != 0u) {
    subgroupMemoryBarrierShared();
    subgroupBarrier();
  } else {
    barrier();
  }
}

// Decode the tile in shared memory: each subgroup R rows at a time, C lanes per row.
void decode_tile(uint tile) {
  const uint row0 = tile * ROWS, rows = min(ROWS, pc.N - row0), skew = (row0 * pc.row_bytes) & 15u;
  for (uint r0 = first_row; r0 < rows; r0 += row_step) {  // uniform per subgroup
    const uint r = min(r0 + sub, rows - 1u), at = skew + r * pc.row_bytes;
    for (uint t = 0u; t < pc.T; ++t) {
      float acc = 0.0;
      if (resident) {
        for (uint i = 0u; i < XR; ++i) {
          const uint s = cl + C * i;
          if (s >= pc.slots) break;
          uvec4 q[4];
          vec4 mul, off;
          hlq_slot(0u, at, s, q, mul, off);
          acc += hlq_slot_dot(q, mul, off, uvec4[4](rq[4u * i], rq[4u * i + 1u], rq[4u * i + 2u], rq[4u * i + 3u]),
                              rd[i], rs[i]);
        }
      } else {
        for (uint s = cl; s < pc.slots; s += C) {
          uvec4 q[4], xq[4];
          vec4 mul, off, d, sq;
          hlq_slot(0u, at, s, q, mul, off);
          x_slot(t, s, xq, d, sq);
          acc += hlq_slot_dot(q, mul, off, xq, d, sq);
        }
      }
      for (uint o = C >> 1u; o > 0u; o >>= 1u) acc += subgroupShuffleXor(acc, o);
      if (cl == 0u && r0 + sub < rows) y[t * pc.N + row0 + r] = acc;
    }
  }
}

// One tile of a round: tile d's registers go to shared memory and are refilled with the tile DEPTH strides
// ahead, then the tile is decoded. Called with constant d, so pf is indexed by constants.
void step(uint d, uint tile) {
  sync_worker();  // the previous tile is decoded
  for (uint k = 0u; k < PF; ++k)
    if (k * loaders + loader < STAGE)
      for (uint c = 0u; c < 4u; ++c) stage[region + 4u * (k * loaders + loader) + c] = pf[d * PF + k][c];
  sync_worker();
  for (uint k = 0u; k < PF; ++k) pf[d * PF + k] = tile_load(tile + DEPTH * tile_stride, k * loaders + loader);
  decode_tile(tile);
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

  const uint groups = gl_NumWorkGroups.x * gl_NumWorkGroups.y, nsg = hl_num_subgroups();
  uint tile;
  if (LOCAL != 0u) {
    tile = hl_group_index() * nsg + gl_SubgroupID;
    tile_stride = groups * nsg;
    region = 4u * gl_SubgroupID * STAGE;
    loader = gl_SubgroupInvocationID;
    loaders = gl_SubgroupSize;
    first_row = 0u;
    row_step = R;
  } else {
    tile = hl_group_index();
    tile_stride = groups;
    region = 0u;
    loader = gl_LocalInvocationID.x;
    loaders = WG;
    first_row = gl_SubgroupID * R;
    row_step = nsg * R;
  }
  for (uint d = 0u; d < DEPTH; ++d)
    for (uint k = 0u; k < PF; ++k) pf[d * PF + k] = tile_load(tile + d * tile_stride, k * loaders + loader);
  while (tile < pc.tiles) {  // uniform per worker
    step(0u, tile);
    tile += tile_stride;
    if (DEPTH > 1u && tile < pc.tiles) {
      step(1u, tile);
      tile += tile_stride;
    }
    if (DEPTH > 2u && tile < pc.tiles) {
      step(2u, tile);
      tile += tile_stride;
    }
  }
}
