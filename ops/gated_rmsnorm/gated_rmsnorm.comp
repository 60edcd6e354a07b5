// gated_rmsnorm (vulkan:rowgroup): over each head (D columns of a row),
// y = o / sqrt(mean(o^2) + eps) * gain * silu(z), gain [D] shared by every head. GROUP invocations per
// head and WG / GROUP heads per workgroup, as in l2norm.comp.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint GROUP = 32;
layout(constant_id = 2) const uint DC = 128;  // D: the loops' trip count a constant (every load in flight at once)
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
  // o, z and the gain loaded first (z and the gain would be another round trip after the sum).
  const uint NV = (DC + GROUP - 1u) / GROUP;  // values per invocation
  float ov[NV], gv[NV], sz[NV], s = 0.0;
  for (uint j = 0u; j < NV; ++j) {
    const uint i = L % GROUP + j * GROUP;
    const bool in_ = live && i < DC;
    ov[j] = in_ ? o[base + i] : 0.0;
    const float zi = in_ ? z[base + i] : 0.0;
    gv[j] = in_ ? gain[i] : 0.0;
    sz[j] = zi / (1.0 + exp(-zi));
  }
  for (uint j = 0u; j < NV; ++j) s += ov[j] * ov[j];  // the strided loop's order
  const float inv = 1.0 / sqrt(hl_group_sum(s, L) / float(DC) + pc.eps);
  for (uint j = 0u; j < NV; ++j) {
    const uint i = L % GROUP + j * GROUP;
    if (live && i < DC) y[base + i] = ov[j] * inv * gv[j] * sz[j];
  }
}
