// gated_rmsnorm (vulkan:rowgroup): over each head (D columns of a row),
// y = o / sqrt(mean(o^2) + eps) * gain * silu(z), gain [D] shared by every head. GROUP invocations per
// head and WG / GROUP heads per workgroup, as in l2norm.comp.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint GROUP = 32;
#include "common.glsl"
#include "group_sum.glsl"

layout(std430, binding = 0) readonly buffer O { float o[]; };
layout(std430, binding = 1) readonly buffer Z { float z[]; };
layout(std430, binding = 2) readonly buffer Gain { float gain[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push {
  uint groups;  // rows * heads
  uint D;
  float eps;
} pc;

void main() {
  const uint L = hl_role(), grp = hl_group_index() * (WG / GROUP) + L / GROUP, base = grp * pc.D;
  const bool live = grp < pc.groups;  // no early return: hl_group_sum may need the whole workgroup
  float s = 0.0;
  for (uint i = L % GROUP; live && i < pc.D; i += GROUP) s += o[base + i] * o[base + i];
  const float inv = 1.0 / sqrt(hl_group_sum(s, L) / float(pc.D) + pc.eps);
  for (uint i = L % GROUP; live && i < pc.D; i += GROUP) {
    const float zi = z[base + i];
    y[base + i] = o[base + i] * inv * gain[i] * (zi / (1.0 + exp(-zi)));
  }
}
