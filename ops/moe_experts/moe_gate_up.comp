// moe_experts / shared_expert, step 1 of 2: for every (token t, slot j) with expert e = expert[t, j],
// hmid[t, j, f] = weight[t, j] * silu(gate_e[f] . x_t) * (up_e[f] . x_t). Experts are stacked: expert e is
// rows [e*F, (e+1)*F) of gate and up [E*F, H]. A workgroup takes ROWS rows f of one (t, j); each subgroup
// computes whole rows (a coalesced dot over H, subgroupAdd), so there are no barriers. Expert ids outside
// [0, E) are clamped: never an out-of-bounds read.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint ROWS = 8;  // rows f per workgroup
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };        // [T, H]
layout(std430, binding = 1) readonly buffer Ex { int expert[]; };    // [T, k]
layout(std430, binding = 2) readonly buffer Wt { float weight[]; };  // [T, k]
layout(std430, binding = 3) readonly buffer G { float gate[]; };     // [E*F, H]
layout(std430, binding = 4) readonly buffer U { float up[]; };       // [E*F, H]
layout(std430, binding = 5) writeonly buffer M { float hmid[]; };    // [T*k, F]
layout(push_constant) uniform Push { uint T, H, F, k, E, blocks; } pc;  // blocks = ceil(F / ROWS)

void main() {
  const uint g = hl_group_index();
  if (g >= pc.T * pc.k * pc.blocks) return;  // uniform per workgroup
  const uint tj = g / pc.blocks, f0 = (g % pc.blocks) * ROWS, xrow = (tj / pc.k) * pc.H;
  const uint e = uint(clamp(expert[tj], 0, int(pc.E) - 1));
  // This subgroup's active width and this invocation's rank in it (a workgroup's last subgroup may be partial).
  const uint lanes = subgroupAdd(1u), lane = subgroupExclusiveAdd(1u);
  for (uint r = gl_SubgroupID; r < ROWS && f0 + r < pc.F; r += hl_num_subgroups()) {
    const uint f = f0 + r, wrow = (e * pc.F + f) * pc.H;
    float ga = 0.0, ua = 0.0;
    for (uint h = lane; h < pc.H; h += lanes) {
      const float xv = x[xrow + h];
      ga += gate[wrow + h] * xv;
      ua += up[wrow + h] * xv;
    }
    ga = subgroupAdd(ga);
    ua = subgroupAdd(ua);
    if (subgroupElect()) hmid[tj * pc.F + f] = weight[tj] * (ga / (1.0 + exp(-ga))) * ua;
  }
}
