// moe_experts (vulkan:route_pack), stage 5: y[t, h] = sum over slots j = 0..k-1, in slot order, of
// weight[t, j] * ye[t * k + j, h] (ye: each entry's expert output, route_gemm.comp). One invocation per
// output (V 4: four neighbouring ones); a fixed summation order and no float atomics, so the result is bit-identical
// run to run.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const uint V = 1;  // outputs per invocation: 4 reads ye and writes y as vec4s (H a multiple of 4)
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Ye { float ye[]; };      // [T * k, H]
layout(std430, binding = 1) readonly buffer Wt { float weight[]; };  // [T, k]
layout(std430, binding = 2) writeonly buffer Y { float y[]; };       // [T, H]
layout(std430, binding = 0) readonly buffer Ye4 { vec4 ye4[]; };
layout(std430, binding = 2) writeonly buffer Y4 { vec4 y4[]; };
layout(push_constant) uniform Push { uint T, H, k; } pc;

void main() {
  const uint i = hl_group_index() * WG + gl_LocalInvocationID.x;
  if (V == 4u) {  // each output's sum in the same order as below
    const uint H4 = pc.H / 4u;
    if (i >= pc.T * H4) return;
    const uint t = i / H4, h = i - t * H4;
    vec4 acc = vec4(0.0);
    for (uint j = 0u; j < pc.k; ++j) acc += weight[t * pc.k + j] * ye4[(t * pc.k + j) * H4 + h];
    y4[i] = acc;
    return;
  }
  if (i >= pc.T * pc.H) return;
  const uint t = i / pc.H, h = i - t * pc.H;
  float acc = 0.0;
  for (uint j = 0u; j < pc.k; ++j) acc += weight[t * pc.k + j] * ye[(t * pc.k + j) * pc.H + h];
  y[i] = acc;
}
