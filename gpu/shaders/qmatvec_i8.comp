// matmul / lm_head (vulkan:qmatvec_i8): y[T, N] = x[T, K] wq[N, K]^T for decode, with w in ggml blocks
// (Q4_K, Q5_K, Q6_K, Q8_0) and x as 8-bit integers (quantize_x8.comp): the products are 4-way integer dot
// products (SPIR-V OpSDot, core in Vulkan 1.3), so decoding a weight costs a mask and a shift per 4 values
// instead of a conversion and a multiply-add per value; on the H200 the float kernel (qmatvec) is bound by
// exactly that arithmetic, not by the weight stream.
//
// Layout: a row is cut into slots of 64 values (K-quants: a quarter of a 256-value block; Q8_0: one 32-value
// block), each slot four (Q8_0: two) runs of 16 values with one multiplier and one offset per run. C lanes
// of a subgroup share a row (C = the next power of two of the slots per row, at most the subgroup size),
// each reading its slots' bytes straight from memory, 16 at a time, with no staging; the C partial sums meet
// through subgroup shuffles. Rows are walked grid-stride, so any subgroup size works (8, 32, 64).
// The weights of a slot are decoded once and serve COLS tokens.
#version 450
#extension GL_KHR_shader_subgroup_shuffle : require
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint TYPE = 14;  // ggml type id
layout(constant_id = 2) const uint COLS = 4;   // tokens per pass over the weights
layout(constant_id = 3) const uint SPL = 1;    // slots a lane decodes per step (their loads in flight together)
#include "common.glsl"

layout(std430, binding = 0) readonly buffer XQ { uvec4 xq4[]; };  // [T, K / 16]: 16 int8 values each
layout(std430, binding = 1) readonly buffer XD { float xd[]; };   // [T, K / 32]: scale per 32 values
layout(std430, binding = 2) readonly buffer XS { float xs[]; };   // [T, K / 16]: scale * sum(q) per 16
layout(std430, binding = 3) readonly buffer W { uint wq[]; };      // raw rows (WeightStore::device_raw)
layout(std430, binding = 4) writeonly buffer Y { float y[]; };    // [T, N]
layout(push_constant) uniform Push { uint T, K, N, row_bytes, slots, slots_p2; } pc;
#define HLQ_WORD(buf, i) wq[i]
#include "quant_blocks.glsl"
#include "quant_slots.glsl"

void main() {
  // Lanes per row (a power of two for the shuffles): the row's slots over about SPL per lane, at most the
  // subgroup; rows per subgroup R.
  const uint C = min(gl_SubgroupSize, max(1u, pc.slots_p2 >> findMSB(SPL))), R = gl_SubgroupSize / C;
  const uint cl = gl_SubgroupInvocationID % C, sub = gl_SubgroupInvocationID / C;
  const uint nsg = hl_num_subgroups(), first = hl_group_index() * nsg + gl_SubgroupID;
  const uint stride = gl_NumWorkGroups.x * gl_NumWorkGroups.y * nsg * R;
  for (uint r0 = first * R; r0 < pc.N; r0 += stride) {  // uniform per subgroup
    const uint row = r0 + sub;
    const bool live = row < pc.N;
    for (uint t0 = 0u; t0 < pc.T; t0 += COLS) {
      float acc[COLS];
      for (uint c = 0u; c < COLS; ++c) acc[c] = 0.0;
      for (uint s0 = cl; live && s0 < pc.slots; s0 += C * SPL) {
        uvec4 q[4 * SPL], start[SPL];  // SPL slots decoded (their loads in flight) before any product
        vec4 mul[SPL], off[SPL];
        for (uint j = 0u; j < SPL; ++j) {
          uvec4 qj[4];
          const uint s = min(s0 + j * C, pc.slots - 1u);  // past the row's slots: a repeat, weighted 0 below
          hlq_slot(row * pc.row_bytes, s, qj, mul[j], off[j]);
          start[j] = hlq_slot_starts(s);
          for (uint r = 0u; r < 4u; ++r) q[4u * j + r] = qj[r];
          if (s0 + j * C >= pc.slots) mul[j] = off[j] = vec4(0.0);
        }
        for (uint c = 0u; c < COLS; ++c) {
          const uint t = t0 + c;
          if (t >= pc.T) break;
          const uint x16 = t * (pc.K >> 4u);
          for (uint j = 0u; j < SPL; ++j)
            for (uint r = 0u; r < HLQ_RUNS; ++r) {
              const uint i = x16 + (start[j][r] >> 4u);
              acc[c] += mul[j][r] * xd[i >> 1u] * float(hlq_dot16(q[4u * j + r], xq4[i])) - off[j][r] * xs[i];
            }
        }
      }
      for (uint c = 0u; c < COLS; ++c)
        for (uint o = C >> 1u; o > 0u; o >>= 1u) acc[c] += subgroupShuffleXor(acc[c], o);
      if (live && cl == 0u)
        for (uint c = 0u; c < COLS && t0 + c < pc.T; ++c) y[(t0 + c) * pc.N + row] = acc[c];
    }
  }
}
