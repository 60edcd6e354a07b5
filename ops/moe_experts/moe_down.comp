// moe_experts / shared_expert, step 2 of 2: y[t, h] = sum over slots j (in slot order) of
// down_e[h] . hmid[t, j] with e = expert[t, j] (hmid already carries the slot's weight). Expert e is rows
// [e*H, (e+1)*H) of down [E*H, F]. A workgroup takes ROWS outputs h of one token; each subgroup computes
// whole outputs (coalesced dots over F, subgroupAdd): deterministic, no atomics, no barriers.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint ROWS = 8;  // outputs h per workgroup
#include "common.glsl"

layout(std430, binding = 0) readonly buffer M { float hmid[]; };   // [T*k, F]
layout(std430, binding = 1) readonly buffer Ex { int expert[]; };  // [T, k]
layout(std430, binding = 2) readonly buffer D { float down[]; };   // [E*H, F]
layout(std430, binding = 3) writeonly buffer Y { float y[]; };     // [T, H]
layout(push_constant) uniform Push { uint T, H, F, k, E, blocks; } pc;  // blocks = ceil(H / ROWS)

void main() {
  const uint g = hl_group_index();
  if (g >= pc.T * pc.blocks) return;  // uniform per workgroup
  const uint t = g / pc.blocks, h0 = (g % pc.blocks) * ROWS;
  const uint lanes = subgroupAdd(1u), lane = subgroupExclusiveAdd(1u);  // as in moe_gate_up.comp
  for (uint r = gl_SubgroupID; r < ROWS && h0 + r < pc.H; r += hl_num_subgroups()) {
    const uint h = h0 + r;
    float acc = 0.0;
    for (uint j = 0u; j < pc.k; ++j) {
      const uint e = uint(clamp(expert[t * pc.k + j], 0, int(pc.E) - 1));
      const uint wrow = (e * pc.H + h) * pc.F, mrow = (t * pc.k + j) * pc.F;
      for (uint f = lane; f < pc.F; f += lanes) acc += down[wrow + f] * hmid[mrow + f];
    }
    acc = subgroupAdd(acc);
    if (subgroupElect()) y[t * pc.H + h] = acc;
  }
}
