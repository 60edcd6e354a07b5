// add_rmsnorm (vulkan:fused): the residual add and the norm that follows it, one pass. One workgroup per group
// of G columns of a row: y = x + a (written: the residual stream), n = y / rms(y) * gain. Saves the add's
// dispatch, barrier and the re-read of y (twice per layer). TWO: y = x + (a + b), the MoE block's routed and
// shared outputs added in the same pass (their add's dispatch saved too; the same order as the separate adds).
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint TWO = 0;  // 1: a second addend b
#define HL_WORKGROUP_SUM_SIZE WG
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer A { float a[]; };
layout(std430, binding = 2) readonly buffer B { float b[]; };  // read only when TWO
layout(std430, binding = 3) readonly buffer Gain { float gain[]; };
layout(std430, binding = 4) writeonly buffer Y { float y[]; };
layout(std430, binding = 5) writeonly buffer N { float n[]; };
layout(push_constant) uniform Push {
  uint groups;  // rows * (cols / G)
  uint G;
  float eps;
} pc;

float addend(uint i) { return TWO != 0u ? a[i] + b[i] : a[i]; }

void main() {
  const uint grp = hl_group_index();
  if (grp >= pc.groups) return;  // uniform per workgroup
  const uint base = grp * pc.G;
  float s = 0.0;
  for (uint i = gl_LocalInvocationID.x; i < pc.G; i += WG) {
    const float v = x[base + i] + addend(base + i);
    y[base + i] = v;
    s += v * v;
  }
  s = hl_workgroup_sum(s);
  const float inv = 1.0 / sqrt(s / float(pc.G) + pc.eps);
  // n recomputes the sum (the same f32 operations) rather than reading y back: no barrier, no second pass over y.
  for (uint i = gl_LocalInvocationID.x; i < pc.G; i += WG) n[base + i] = (x[base + i] + addend(base + i)) * inv * gain[i];
}
