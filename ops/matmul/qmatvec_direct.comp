// matmul / lm_head (vulkan:qmatvec_direct): y[T, N] = x[T, K] w[N, K]^T for decode, w in ggml blocks
// (quant_blocks.glsl), x in f32 and f32 accumulation: the exact products of vulkan:qmatvec, with the weight
// stream read differently.
//
// Why: qmatvec stages a workgroup's rows in shared memory behind a barrier, so a workgroup has one round of
// loads in flight and then computes; at the decode projections' sizes (2 to 10 MB) that serialises load
// latency and arithmetic (far from the bytes' time: reports/<device>/matmul.md). Here nothing waits on a
// barrier after x is staged: each subgroup takes R rows per pass, every lane the same 32-value units of
// each row (UPL of them per step, unrolled), and all R x UPL units' words are independent loads the
// compiler issues before the arithmetic. Q4_K/Q5_K fields are 16-byte loads (HLQ_UVEC4); Q6_K and Q8_0
// blocks are only 2-byte aligned and read as words.
// x sits in shared memory (K floats): one 16-byte read of x serves R rows. With XG x is read from global
// memory instead (every subgroup reads the same K floats, served by the caches), so the weight loads issue
// at once, not behind the staging's round trip and barrier. Subgroups walk passes grid-stride, so any
// subgroup size works.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const uint TYPE = 12;  // ggml type id
layout(constant_id = 2) const uint R = 4;      // rows per subgroup pass
layout(constant_id = 3) const uint UPL = 2;    // 32-value units per lane per step
layout(constant_id = 4) const uint XV = 512;   // vec4s of x staged: K / 4
layout(constant_id = 5) const uint XG = 0;     // 1: x read from global memory (cached), not staged: no barrier
layout(constant_id = 6) const uint SGS = 32;   // the smallest subgroup size the device may run: the trip count covers it
#define HL_WORKGROUP_SUM_SIZE WG
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { vec4 x4[]; };   // [T, K]
layout(std430, binding = 1) readonly buffer W { uint wq[]; };    // raw rows (WeightStore::device_raw)
layout(std430, binding = 2) readonly buffer W4 { uvec4 wq4[]; };  // the same rows as 16-byte units
layout(std430, binding = 3) writeonly buffer Y { float y[]; };  // [T, N]
layout(push_constant) uniform Push { uint T, K, N, row_bytes; } pc;

#define HLQ_WORD(buf, i) wq[i]
#define HLQ_UVEC4(buf, i) wq4[i]
#include "quant_blocks.glsl"

shared vec4 xs[XG != 0u ? 1u : XV];

void main() {
  // The unit loop's trip count is a constant (units = K / 32 from XV, at least SGS lanes): the compiler unrolls it
  // and issues every step's loads together instead of one dependent round per step.
  const uint lanes = gl_SubgroupSize, lane = gl_SubgroupInvocationID, units = XV / 8u;
  const uint nsg = hl_num_subgroups();
  const uint first = (hl_group_index() * nsg + gl_SubgroupID) * R;
  const uint stride = gl_NumWorkGroups.x * gl_NumWorkGroups.y * nsg * R;
  for (uint t = 0u; t < pc.T; ++t) {
    const uint xrow = t * (pc.K / 4u);
    if (XG == 0u) {
      barrier();  // the previous token's x is no longer read
      for (uint i = gl_LocalInvocationID.x; i < pc.K / 4u; i += WG) xs[i] = x4[xrow + i];
      barrier();
    }
    for (uint r0 = first; r0 < pc.N; r0 += stride) {  // uniform per subgroup
      float acc[R];
      for (uint r = 0u; r < R; ++r) acc[r] = 0.0;
      for (uint step = 0u; step < (units + SGS * UPL - 1u) / (SGS * UPL); ++step) {
        const uint u0 = lane + step * lanes * UPL;  // past the row: clamped loads, weighted 0 below (no branch)
        for (uint i = 0u; i < UPL; ++i) {
          // Past the row's units: a repeat of the last, weighted 0 (no branch between the loads).
          const uint u = u0 + i * lanes, uu = min(u, units - 1u);
          const uvec2 runs = hlq_unit_runs(TYPE, uu) >> 2u;
          vec4 xv[8];
          for (uint k = 0u; k < 4u; ++k) {
            xv[k] = XG != 0u ? x4[xrow + runs.x + k] : xs[runs.x + k];
            xv[k + 4u] = XG != 0u ? x4[xrow + runs.y + k] : xs[runs.y + k];
          }
          const vec2 xsum = hlq_run_sums(xv);
          for (uint r = 0u; r < R; ++r) {
            const uint row = min(r0 + r, pc.N - 1u);  // past the last row: a repeat, not stored
            vec4 q[8], ms;
            hlq_unit(TYPE, 0u, row * pc.row_bytes, uu, q, ms);
            const float d = hlq_unit_dot(q, ms, xv, xsum);
            acc[r] += u < units ? d : 0.0;
          }
        }
      }
      for (uint r = 0u; r < R; ++r) {
        const float s = subgroupAdd(acc[r]);
        if (subgroupElect() && r0 + r < pc.N) y[t * pc.N + r0 + r] = s;
      }
    }
  }
}
