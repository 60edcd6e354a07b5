// Quantized rows (ggml blocks, quant_blocks.glsl) to f32 [rows, cols], bit-exact to the reference dequantizer:
// one invocation per 32-value unit, writing its two 16-value runs as vec4s. Lets an f32 kernel stand in where its
// tiles would otherwise decode blocks per use (route_pack's grouped GEMM on a prompt chunk's experts).
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const uint TYPE = 12;  // ggml type id
#include "common.glsl"

layout(std430, binding = 0) readonly buffer W { uint wq[]; };   // raw rows (WeightStore::device_raw)
layout(std430, binding = 1) writeonly buffer Y { vec4 y4[]; };  // [rows, cols] f32
layout(push_constant) uniform Push { uint rows, cols, row_bytes; } pc;
#define HLQ_WORD(buf, i) wq[i]
#include "quant_blocks.glsl"

void main() {
  const uint units = pc.cols / 32u, i = hl_group_index() * WG + gl_LocalInvocationID.x;
  if (i >= pc.rows * units) return;
  const uint r = i / units, u = i % units;
  vec4 q[8], ms, v[8];
  hlq_unit(TYPE, 0u, r * pc.row_bytes, u, q, ms);
  hlq_dequant(q, ms, v);
  const uvec2 runs = hlq_unit_runs(TYPE, u);
  const uint lo = (r * pc.cols + runs.x) >> 2u, hi = (r * pc.cols + runs.y) >> 2u;
  for (uint k = 0u; k < 4u; ++k) {
    y4[lo + k] = v[k];
    y4[hi + k] = v[k + 4u];
  }
}
