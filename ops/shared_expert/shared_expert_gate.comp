// shared_expert (vulkan:fused), step 0: the shared expert as a one-expert route for moe_gate_up/moe_down.
// One workgroup per token: weight[t] = sigmoid(x_t . gate_w), expert[t] = 0.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
#define HL_WORKGROUP_SUM_SIZE WG
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };        // [T, H]
layout(std430, binding = 1) readonly buffer Gw { float gate_w[]; };  // [H]
layout(std430, binding = 2) writeonly buffer Ex { int expert[]; };   // [T, 1]
layout(std430, binding = 3) writeonly buffer Wt { float weight[]; }; // [T, 1]
layout(push_constant) uniform Push { uint T, H; } pc;

void main() {
  const uint t = hl_group_index();
  if (t >= pc.T) return;  // uniform per workgroup
  float s = 0.0;
  for (uint h = gl_LocalInvocationID.x; h < pc.H; h += WG) s += x[t * pc.H + h] * gate_w[h];
  s = hl_workgroup_sum(s);
  if (gl_LocalInvocationID.x == 0u) {
    weight[t] = 1.0 / (1.0 + exp(-s));
    expert[t] = 0;
  }
}
