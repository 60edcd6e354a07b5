// argmax (a device helper, plan/argmax.h): one workgroup per row of an f32 matrix [rows, cols] writes the
// column of the row's largest value. Ties go to the smallest column (what a CPU scan keeping the first maximum
// returns); NaNs are skipped; a row of NaNs only gives -1. Greedy decode uses it so the logits stay on the device.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { int y[]; };
layout(push_constant) uniform Push {
  uint rows;
  uint cols;
} pc;

const uint NONE = 0xffffffffu;  // no candidate yet (sorts after every real column)
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
  const uint row = hl_group_index();
  if (row >= pc.rows) return;  // uniform per workgroup
  const uint base = row * pc.cols;
  float bv = 0.0;
  uint bi = NONE;
  // Each invocation's columns rise, so a strict comparison keeps its first maximum.
  for (uint c = gl_LocalInvocationID.x; c < pc.cols; c += WG) {
    const float v = x[base + c];
    if (!isnan(v) && (bi == NONE || v > bv)) bv = v, bi = c;
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
    if (subgroupElect()) y[row] = i == NONE ? -1 : int(i);
  }
}
