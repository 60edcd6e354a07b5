// add_rmsnorm (vulkan:fused): the residual add and the norm that follows it, one pass. One workgroup per group
// of G columns of a row: y = x + a (written: the residual stream), n = y / rms(y) * gain. Saves the add's
// dispatch, barrier and the re-read of y (twice per layer). TWO: y = x + (a + b), the MoE block's routed and
// shared outputs added in the same pass (their add's dispatch saved too; the same order as the separate adds).
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint TWO = 0;  // 1: a second addend b
layout(constant_id = 2) const uint GC = 2048;  // G, the group's values: the loops' trip count a constant
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
  uint G;       // = GC
  float eps;
} pc;

const uint NV = (GC + WG - 1u) / WG;  // values per invocation

float addend(uint i) { return TWO != 0u ? a[i] + b[i] : a[i]; }

void main() {
  const uint grp = hl_group_index();
  if (grp >= pc.groups) return;  // uniform per workgroup
  const uint base = grp * GC, lid = gl_LocalInvocationID.x;
  // Every load first (a constant trip count: unrolled, all in flight together), the sums in the same order as
  // a strided loop, y kept in registers for n.
  // The gain too: read after the sum it would be one more round trip on the step's critical path.
  float v[NV], gv[NV];
  for (uint j = 0u; j < NV; ++j) {
    const uint i = lid + j * WG;
    v[j] = i < GC ? x[base + i] + addend(base + i) : 0.0;
    gv[j] = i < GC ? gain[i] : 0.0;
  }
  float s = 0.0;
  for (uint j = 0u; j < NV; ++j) {
    const uint i = lid + j * WG;
    if (i < GC) y[base + i] = v[j];
    s += v[j] * v[j];
  }
  s = hl_workgroup_sum(s);
  const float inv = 1.0 / sqrt(s / float(GC) + pc.eps);
  for (uint j = 0u; j < NV; ++j) {
    const uint i = lid + j * WG;
    if (i < GC) n[base + i] = v[j] * inv * gv[j];
  }
}
