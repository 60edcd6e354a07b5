// rmsnorm (vulkan:rowgroup): y = x / rms(x) * gain over each group of G columns of a row. GROUP invocations per
// group and WG / GROUP groups per workgroup (as gated_rmsnorm.comp): a short group (a head's 256 values) takes a
// subgroup and sums without a barrier, where a workgroup per group spent most of its time in the workgroup's sum.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint GROUP = 32;
layout(constant_id = 2) const uint GC = 2048;  // G, the group's values: the loops' trip count a constant
#include "common.glsl"
#include "group_sum.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Gain { float gain[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push {
  uint groups;  // rows * (cols / G)
  uint G;       // = GC
  float eps;
} pc;

const uint NV = (GC + GROUP - 1u) / GROUP;  // values per invocation

void main() {
  const uint L = hl_role(), grp = hl_group_index() * (WG / GROUP) + L / GROUP, base = grp * GC, li = L % GROUP;
  const bool live = grp < pc.groups;  // no early return: hl_group_sum may need the whole workgroup
  float v[NV], g[NV];  // every load first (unrolled, all in flight together), kept for the output
  for (uint j = 0u; j < NV; ++j) {
    const bool in_ = live && li + j * GROUP < GC;
    v[j] = in_ ? x[base + li + j * GROUP] : 0.0;
    g[j] = in_ ? gain[li + j * GROUP] : 0.0;
  }
  float s = 0.0;
  for (uint j = 0u; j < NV; ++j) s += v[j] * v[j];
  const float inv = 1.0 / sqrt(hl_group_sum(s, L) / float(GC) + pc.eps);
  for (uint j = 0u; j < NV; ++j)
    if (live && li + j * GROUP < GC) y[base + li + j * GROUP] = v[j] * inv * g[j];
}
