// matmul / lm_head (vulkan:qmatvec): y[T, N] = x[T, K] w[N, K]^T with w in ggml blocks (quant_blocks.glsl),
// for decode. A workgroup takes ROWS consecutive rows, whose raw bytes are one contiguous span: every
// invocation first issues its share of that span as coalesced 16-byte loads into shared memory (the whole
// workgroup's stream in flight at once, whatever the block alignment), then each subgroup decodes PASS rows
// at a time against x held in registers (x is read once per PASS rows), f32 accumulation, subgroupAdd per row.
// More than one token: the staged rows serve every token.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint TYPE = 14;   // ggml type id
layout(constant_id = 2) const uint ROWS = 16;   // rows per workgroup
layout(constant_id = 3) const uint PASS = 2;    // rows a subgroup decodes per load of x
layout(constant_id = 4) const uint STAGE = 1;   // uvec4s staged: >= (ROWS * row_bytes + 15) / 16 + 1
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { vec4 x4[]; };   // [T, K]
layout(std430, binding = 1) readonly buffer W { uvec4 w4[]; };  // raw rows (WeightStore::device_raw)
layout(std430, binding = 2) writeonly buffer Y { float y[]; };  // [T, N]
layout(push_constant) uniform Push { uint T, K, N, row_bytes; } pc;

// Words, not uvec4s: a word picked out of a shared uvec4 by a run-time index costs a 16-byte read.
shared uint stage[4u * STAGE];
#define HLQ_WORD(buf, i) stage[i]
#include "quant_blocks.glsl"

void main() {
  const uint row0 = hl_group_index() * ROWS;
  if (row0 >= pc.N) return;  // uniform per workgroup
  const uint rows = min(ROWS, pc.N - row0), first = row0 * pc.row_bytes, base = first >> 4u;
  const uint n16 = ((first + rows * pc.row_bytes + 15u) >> 4u) - base;
  for (uint k = 0u; k < (STAGE + WG - 1u) / WG; ++k) {  // a constant trip count: unrolled, all loads issued at once
    const uint i = k * WG + gl_LocalInvocationID.x;
    if (i < n16) {
      const uvec4 v = w4[base + i];
      for (uint c = 0u; c < 4u; ++c) stage[4u * i + c] = v[c];
    }
  }
  barrier();
  const uint skew = first & 15u, units = pc.K / 32u;  // row0's first byte within stage[0]
  const uint lanes = subgroupAdd(1u), lane = subgroupExclusiveAdd(1u);  // a last subgroup may be partial
  for (uint t = 0u; t < pc.T; ++t) {
    const uint xrow = t * (pc.K >> 2u);
    for (uint r0 = gl_SubgroupID * PASS; r0 < rows; r0 += hl_num_subgroups() * PASS) {
      float acc[PASS];
      for (uint r = 0u; r < PASS; ++r) acc[r] = 0.0;
      for (uint u = lane; u < units; u += lanes) {
        const uvec2 runs = hlq_unit_runs(TYPE, u) >> 2u;
        vec4 xv[8];
        for (uint k = 0u; k < 4u; ++k) {
          xv[k] = x4[xrow + runs.x + k];
          xv[k + 4u] = x4[xrow + runs.y + k];
        }
        const vec2 xs = hlq_run_sums(xv);
        for (uint r = 0u; r < PASS; ++r) {
          if (r0 + r >= rows) break;  // uniform per subgroup
          vec4 q[8], ms;
          hlq_unit(TYPE, 0u, skew + (r0 + r) * pc.row_bytes, u, q, ms);
          acc[r] += hlq_unit_dot(q, ms, xv, xs);
        }
      }
      for (uint r = 0u; r < PASS && r0 + r < rows; ++r) {
        const float s = subgroupAdd(acc[r]);
        if (subgroupElect()) y[t * pc.N + row0 + r0 + r] = s;
      }
    }
  }
}
