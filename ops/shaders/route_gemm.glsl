// Shared by the grouped expert GEMMs of moe_experts route_pack (route_gemm.comp, scalar; route_gemm_cm.comp,
// cooperative matrices): which packed rows a workgroup takes, and decoding a ggml unit into a weight tile.
// Before including, declare: the buffers rows[], offsets[], tiles[]; pc with E, K, k, ncol; spec constants
// WG, BM, BN, GATED; `shared uint arow[BM]`; quant_blocks.glsl; and define ROUTE_STAGE(buf, c, kk, v), which
// stores value v at depth kk of column c of the weight tile of buf (0: w0, 1: w1).
#ifndef HL_ROUTE_GEMM_GLSL
#define HL_ROUTE_GEMM_GLSL

const uint ROUTE_NONE = 0xffffffffu;

// Workgroup g (route_tile: this one) takes row tile ti = g / ncol of the compact tile list (route_offsets.comp) and output columns
// [n0, n0 + BN), n0 = (g % ncol) * BN. Its expert e is the one whose tile range holds ti (binary search over
// tiles[]), its rows the packed positions [p0, p1) = [offsets[e] + (ti - tiles[e]) * BM, ...) of that expert;
// arow[r] is the offset of tile row r in the A operand (ROUTE_NONE past the expert's rows). False (the same
// for the whole workgroup) past the packed tiles: the workgroup has nothing to do.
bool route_tile_at(uint g, out uint e, out uint p0, out uint p1, out uint n0) {
  const uint ti = g / pc.ncol;
  n0 = (g % pc.ncol) * BN;
  if (ti >= uint(tiles[pc.E])) return false;
  uint lo = 0u, hi = pc.E;  // tiles[lo] <= ti < tiles[hi]
  while (hi - lo > 1u) {
    const uint mid = (lo + hi) / 2u;
    if (uint(tiles[mid]) <= ti) lo = mid; else hi = mid;
  }
  e = lo;
  p0 = uint(offsets[e]) + (ti - uint(tiles[e])) * BM;
  p1 = min(p0 + BM, uint(offsets[e + 1u]));
  for (uint r = gl_LocalInvocationID.x; r < BM; r += WG) {
    const uint pos = p0 + r;
    arow[r] = pos >= p1 ? ROUTE_NONE : (GATED == 1u ? uint(rows[pos]) / pc.k : pos) * pc.K;
  }
  return true;
}
bool route_tile(out uint e, out uint p0, out uint p1, out uint n0) { return route_tile_at(hl_group_index(), e, p0, p1, n0); }

#ifdef ROUTE_STAGE
// Decodes unit u of the weight row at byte `row` of buffer buf (zeros if !ok) into column c of its tile;
// the slice starts at value k0.
void route_stage_unit(uint type, uint buf, bool ok, uint row, uint u, uint k0, uint c) {
  vec4 v[8];
  if (ok) {
    vec4 q[8], ms;
    hlq_unit(type, buf, row, u, q, ms);
    hlq_dequant(q, ms, v);
  } else {
    for (uint i = 0u; i < 8u; ++i) v[i] = vec4(0.0);
  }
  const uvec2 runs = hlq_unit_runs(type, u) - k0;
  for (uint i = 0u; i < 8u; ++i)
    for (uint j = 0u; j < 4u; ++j) ROUTE_STAGE(buf, c, (i < 4u ? runs.x : runs.y) + 4u * (i % 4u) + j, v[i][j]);
}
#endif

#endif
