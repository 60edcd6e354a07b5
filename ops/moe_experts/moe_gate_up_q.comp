// moe_experts / shared_expert on quantized experts, step 1 of 2 (moe_gate_up.comp with weights read as ggml
// blocks, quant_blocks.glsl): hmid[t, j, f] = weight[t, j] * silu(gate_e[f] . x_t) * (up_e[f] . x_t),
// e = expert[t, j]. A workgroup takes ROWS rows f of one (t, j); each subgroup decodes whole rows, its lanes
// taking 32-value units of gate and up against x read once for both (if of one type), subgroupAdd.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint ROWS = 8;      // rows f per workgroup
layout(constant_id = 2) const uint TYPE_G = 12;  // ggml type ids of gate and up
layout(constant_id = 3) const uint TYPE_U = 12;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { vec4 x4[]; };      // [T, H]
layout(std430, binding = 1) readonly buffer Ex { int expert[]; };  // [T, k]
layout(std430, binding = 2) readonly buffer Wt { float weight[]; };  // [T, k]
layout(std430, binding = 3) readonly buffer G { uint gq[]; };      // raw rows of [E*F, H]
layout(std430, binding = 4) readonly buffer U { uint uq[]; };      // raw rows of [E*F, H]
layout(std430, binding = 5) writeonly buffer M { float hmid[]; };  // [T*k, F]
layout(push_constant) uniform Push { uint T, H, F, k, E, blocks, rb_gate, rb_up, rb_down; } pc;  // blocks = ceil(F / ROWS)

#define HLQ_WORD(buf, i) ((buf) == 0u ? gq[i] : uq[i])
#include "quant_blocks.glsl"

// x's values at unit u's runs for `type` (row xrow, in vec4s), and their run sums.
void load_x(uint type, uint u, uint xrow, out vec4 xv[8], out vec2 xs) {
  const uvec2 runs = hlq_unit_runs(type, u) >> 2u;
  for (uint i = 0u; i < 4u; ++i) {
    xv[i] = x4[xrow + runs.x + i];
    xv[i + 4u] = x4[xrow + runs.y + i];
  }
  xs = hlq_run_sums(xv);
}

void main() {
  const uint g = hl_group_index();
  if (g >= pc.T * pc.k * pc.blocks) return;  // uniform per workgroup
  const uint tj = g / pc.blocks, f0 = (g % pc.blocks) * ROWS, xrow = (tj / pc.k) * (pc.H >> 2u);
  const uint e = uint(clamp(expert[tj], 0, int(pc.E) - 1));  // never an out-of-bounds read
  const uint lanes = subgroupAdd(1u), lane = subgroupExclusiveAdd(1u);  // a last subgroup may be partial
  for (uint r = gl_SubgroupID; r < ROWS && f0 + r < pc.F; r += hl_num_subgroups()) {
    const uint row = e * pc.F + f0 + r;
    float ga = 0.0, ua = 0.0;
    for (uint u = lane; u < pc.H / 32u; u += lanes) {
      vec4 xv[8], q[8], ms;
      vec2 xs;
      load_x(TYPE_G, u, xrow, xv, xs);
      hlq_unit(TYPE_G, 0u, row * pc.rb_gate, u, q, ms);
      ga += hlq_unit_dot(q, ms, xv, xs);
      if (TYPE_U != TYPE_G) load_x(TYPE_U, u, xrow, xv, xs);  // same type: same x values, loaded once
      hlq_unit(TYPE_U, 1u, row * pc.rb_up, u, q, ms);
      ua += hlq_unit_dot(q, ms, xv, xs);
    }
    ga = subgroupAdd(ga);
    ua = subgroupAdd(ua);
    if (subgroupElect()) hmid[tj * pc.F + f0 + r] = weight[tj] * (ga / (1.0 + exp(-ga))) * ua;
  }
}
