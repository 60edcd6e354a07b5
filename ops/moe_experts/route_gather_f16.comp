// moe_experts vulkan:route_pack_warp: the A operand of the gate/up pass, x's row of each packed entry in f16, in packed
// order (route_warp_cm.glsl reads it straight into its matrices), and BM rows of zeros after them.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { vec4 x[]; };       // [T, K]
layout(std430, binding = 1) readonly buffer Rows { int rows[]; };  // [P] entry ids, packed order
layout(std430, binding = 2) writeonly buffer A { uvec2 a[]; };     // [P + pad, K] f16
layout(push_constant) uniform Push {
  uint P, pad;  // packed rows; zero rows after them
  uint K4;      // K / 4
  uint k;       // slots per token
} pc;

void main() {
  const uint i = hl_group_index() * WG + gl_LocalInvocationID.x, p = i / pc.K4, c = i % pc.K4;
  if (p >= pc.P + pc.pad) return;
  const vec4 v = p < pc.P ? x[(uint(rows[p]) / pc.k) * pc.K4 + c] : vec4(0.0);
  a[i] = uvec2(packHalf2x16(v.xy), packHalf2x16(v.zw));
}
