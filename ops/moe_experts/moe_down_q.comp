// moe_experts / shared_expert on quantized experts, step 2 of 2 (moe_down.comp with weights read as ggml
// blocks, quant_blocks.glsl): y[t, h] = sum over slots j of down_e[h] . hmid[t, j], e = expert[t, j]. A
// workgroup takes ROWS outputs h of one token; each subgroup computes whole outputs, its lanes taking
// (slot, 32-value unit) pairs, so short rows (F = 512: 16 units) still fill a subgroup; subgroupAdd.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint ROWS = 8;     // outputs h per workgroup
layout(constant_id = 2) const uint TYPE_D = 14;  // ggml type id of down
#include "common.glsl"

layout(std430, binding = 0) readonly buffer M { vec4 hmid4[]; };   // [T*k, F]
layout(std430, binding = 1) readonly buffer Ex { int expert[]; };  // [T, k]
layout(std430, binding = 2) readonly buffer D { uint dq[]; };      // raw rows of [E*H, F]
layout(std430, binding = 3) writeonly buffer Y { float y[]; };     // [T, H]
layout(push_constant) uniform Push { uint T, H, F, k, E, blocks, rb_gate, rb_up, rb_down; } pc;  // blocks = ceil(H / ROWS)

#define HLQ_WORD(buf, i) dq[i]
#include "quant_blocks.glsl"

void main() {
  const uint g = hl_group_index();
  if (g >= pc.T * pc.blocks) return;  // uniform per workgroup
  const uint t = g / pc.blocks, h0 = (g % pc.blocks) * ROWS, units = pc.F / 32u;
  const uint lanes = subgroupAdd(1u), lane = subgroupExclusiveAdd(1u);  // as in moe_gate_up_q.comp
  for (uint r = gl_SubgroupID; r < ROWS && h0 + r < pc.H; r += hl_num_subgroups()) {
    float acc = 0.0;
    for (uint p = lane; p < pc.k * units; p += lanes) {
      const uint j = p / units, u = p % units;
      const uint e = uint(clamp(expert[t * pc.k + j], 0, int(pc.E) - 1));
      const uint mrow = (t * pc.k + j) * (pc.F >> 2u);
      const uvec2 runs = hlq_unit_runs(TYPE_D, u) >> 2u;
      vec4 xv[8], q[8], ms;
      for (uint i = 0u; i < 4u; ++i) {
        xv[i] = hmid4[mrow + runs.x + i];
        xv[i + 4u] = hmid4[mrow + runs.y + i];
      }
      hlq_unit(TYPE_D, 0u, (e * pc.H + h0 + r) * pc.rb_down, u, q, ms);
      acc += hlq_unit_dot(q, ms, xv, hlq_run_sums(xv));
    }
    acc = subgroupAdd(acc);
    if (subgroupElect()) y[t * pc.H + h0 + r] = acc;
  }
}
