// Self-test of the Vulkan runtime (tests/runtime/test_vulkan.cpp): specialization constants
// (workgroup size, a float scale), push constants, a subgroup reduction correct for any subgroup
// size, an #include, and a #define that run-time compilation can change.
#version 450

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG_SIZE = 64;  // same id: the workgroup size, usable as a constant
layout(constant_id = 1) const float SCALE = 1.0;

#define HL_WORKGROUP_SUM_SIZE WG_SIZE
#include "common.glsl"

#ifndef SELFTEST_BIAS
#define SELFTEST_BIAS 0.0
#endif

layout(std430, binding = 0) readonly buffer Input { float x[]; };
layout(std430, binding = 1) writeonly buffer Sums { float sums[]; };  // one per workgroup
layout(std430, binding = 2) writeonly buffer Info { uint info[]; };   // [0] = gl_SubgroupSize

layout(push_constant) uniform Push {
  uint n;
  float alpha;
} pc;

void main() {
  const uint i = gl_GlobalInvocationID.x;
  // sums[g] = sum over the group's valid i of (alpha * SCALE * x[i] + SELFTEST_BIAS)
  float v = i < pc.n ? pc.alpha * SCALE * x[i] + SELFTEST_BIAS : 0.0;
  float total = hl_workgroup_sum(v);
  if (gl_LocalInvocationIndex == 0u) {
    sums[gl_WorkGroupID.x] = total;
    if (gl_WorkGroupID.x == 0u) info[0] = gl_SubgroupSize;
  }
}
