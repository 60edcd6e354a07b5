// argmax (a device helper, plan/argmax.h): the column of each row's largest value in an f32 matrix [rows, cols].
// Ties go to the smallest column (what a CPU scan keeping the first maximum returns); NaNs are skipped; a row of
// NaNs only gives -1. Greedy decode uses it so the logits stay on the device. Two steps, so that a vocabulary-wide
// row is read by many workgroups: STAGE 0, workgroup (row, part) writes the best (value, column) of its slice of
// `span` columns; STAGE 1, a workgroup per row reduces the row's `parts` candidates to its column.
#version 450
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint STAGE = 0;
#include "common.glsl"

struct Best {
  float v;
  uint i;
};
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer P { Best part[]; };  // [rows, parts]
layout(std430, binding = 2) writeonly buffer Y { int y[]; };
layout(push_constant) uniform Push {
  uint rows;
  uint cols;
  uint parts;
  uint span;  // columns per part
} pc;

const uint NONE = 0xffffffffu;  // no candidate yet (sorts after every real column)
const uint U = 8u;              // STAGE 0: columns per invocation per round
shared float red_v[WG];         // one (value, column) per subgroup: at most WG subgroups for any subgroup size
shared uint red_i[WG];

// (v, i) beats (bv, bi): larger value, or the same value at a smaller column; NONE never wins.
bool better(float v, uint i, float bv, uint bi) { return i != NONE && (bi == NONE || v > bv || (v == bv && i < bi)); }

// The best (value, column) of the subgroup, returned to every lane.
void subgroup_best(inout float v, inout uint i) {
  const float m = subgroupMax(i == NONE ? -1.0 / 0.0 : v);
  i = subgroupMin(i != NONE && v == m ? i : NONE);
  v = m;
}

void main() {
  const uint g = hl_group_index();
  if (g >= pc.rows * (STAGE == 0u ? pc.parts : 1u)) return;  // uniform per workgroup
  float bv = 0.0;
  uint bi = NONE;
  if (STAGE == 0u) {
    // Each invocation's columns rise, so a strict comparison keeps its first maximum. U columns per round, loaded
    // before any is compared: a round's loads are in flight together, not a memory round trip per column.
    const uint row = g / pc.parts, c0 = (g % pc.parts) * pc.span, c1 = min(pc.cols, c0 + pc.span), base = row * pc.cols;
    for (uint cr = c0 + gl_LocalInvocationID.x; cr < c1; cr += WG * U) {
      float v[U];
      [[unroll]] for (uint u = 0u; u < U; ++u) {
        const uint c = cr + u * WG;
        v[u] = c < c1 ? x[base + c] : 0.0;
      }
      [[unroll]] for (uint u = 0u; u < U; ++u) {
        const uint c = cr + u * WG;
        if (c < c1 && !isnan(v[u]) && (bi == NONE || v[u] > bv)) bv = v[u], bi = c;
      }
    }
  } else {
    for (uint s = gl_LocalInvocationID.x; s < pc.parts; s += WG) {
      const Best b = part[g * pc.parts + s];
      if (better(b.v, b.i, bv, bi)) bv = b.v, bi = b.i;
    }
  }
  subgroup_best(bv, bi);
  if (subgroupElect()) red_v[gl_SubgroupID] = bv, red_i[gl_SubgroupID] = bi;
  barrier();
  if (gl_SubgroupID == 0u) {
    float v = 0.0;
    uint i = NONE;
    for (uint s = gl_SubgroupInvocationID; s < hl_num_subgroups(); s += gl_SubgroupSize)
      if (better(red_v[s], red_i[s], v, i)) v = red_v[s], i = red_i[s];
    subgroup_best(v, i);
    if (subgroupElect()) {
      if (STAGE == 0u) part[g] = Best(v, i);
      else y[g] = i == NONE ? -1 : int(i);
    }
  }
}
