// l2norm (vulkan:rowgroup): y = x * scale / sqrt(sum x^2 + eps) over each group of D columns of a row.
// GROUP invocations per group and WG / GROUP groups per workgroup: the groups are short (128), and a
// workgroup each would be mostly launch and barrier overhead.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint GROUP = 32;
layout(constant_id = 2) const uint DC = 128;  // D: the loops' trip count a constant (every load in flight at once)
#include "common.glsl"
#include "group_sum.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push {
  uint groups;  // rows * (cols / D)
  uint D;
  float scale, eps;
} pc;

void main() {
  const uint L = hl_role(), grp = hl_group_index() * (WG / GROUP) + L / GROUP, base = grp * pc.D;
  const bool live = grp < pc.groups;  // no early return: hl_group_sum may need the whole workgroup
  const uint NV = (DC + GROUP - 1u) / GROUP;  // values per invocation
  float v[NV], s = 0.0;
  for (uint j = 0u; j < NV; ++j) {
    const uint i = L % GROUP + j * GROUP;
    v[j] = live && i < DC ? x[base + i] : 0.0;
  }
  for (uint j = 0u; j < NV; ++j) s += v[j] * v[j];  // the strided loop's order
  const float f = pc.scale / sqrt(hl_group_sum(s, L) + pc.eps);
  for (uint j = 0u; j < NV; ++j) {
    const uint i = L % GROUP + j * GROUP;
    if (live && i < DC) y[base + i] = v[j] * f;
  }
}
