// moe_router (vulkan:subgroup_topk): one subgroup per token, no barriers. Lane l holds the logits of experts l, l + lanes,
// ... in registers (a constant count per lane: every load in flight at once); p = softmax over all E (max-subtracted,
// f32: subgroup max and sum); then k rounds, each the largest p and the lowest expert id among equal p (the
// reference's order) by two subgroup reductions; only the winning lane drops that entry and finds its next best.
// Weights p_e / sum of the k chosen (summed in slot order, as the reference does); all NaN where the logits are not
// finite (as softmax_topk's).
#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint EMAX = 256;  // the host passes E
layout(constant_id = 2) const uint SGS = 32;    // the smallest subgroup size the device may run: entries per lane cover it
#include "common.glsl"

layout(std430, binding = 0) readonly buffer L { float logits[]; };
layout(std430, binding = 1) writeonly buffer Ex { int expert[]; };
layout(std430, binding = 2) buffer Wt { float weight[]; };  // the elected lane writes p, then rescales it
layout(push_constant) uniform Push { uint T, E, k; } pc;

const uint NONE = 0xffffffffu;
const uint PER = (EMAX + SGS - 1u) / SGS;  // entries per lane

void main() {
  const uint t = hl_group_index() * hl_num_subgroups() + gl_SubgroupID;
  if (t >= pc.T) return;  // uniform per subgroup: no barriers below
  const uint lane = gl_SubgroupInvocationID, lanes = gl_SubgroupSize, row = t * pc.E;
  const float neg_inf = uintBitsToFloat(0xff800000u);
  float v[PER], mx = neg_inf;
  for (uint i = 0u; i < PER; ++i) {
    const uint e = lane + i * lanes;
    v[i] = e < pc.E ? logits[row + e] : neg_inf;
    mx = max(mx, v[i]);
  }
  mx = subgroupMax(mx);
  float s = 0.0;
  for (uint i = 0u; i < PER; ++i) {
    const uint e = lane + i * lanes;
    v[i] = e < pc.E ? exp(v[i] - mx) : -1.0;  // -1: no expert (p >= 0 otherwise)
    s += e < pc.E ? v[i] : 0.0;
  }
  s = subgroupAdd(s);
  float bv = -1.0;
  uint bi = NONE;
  for (uint i = 0u; i < PER; ++i) {
    if (lane + i * lanes < pc.E) v[i] /= s;
    if (v[i] > bv) {  // ascending e: the lowest id among equal values stays
      bv = v[i];
      bi = i;
    }
  }
  float sum = 0.0;
  for (uint j = 0u; j < pc.k; ++j) {
    const float m = subgroupMax(bv);
    const uint mi = subgroupMin(bv == m && bi != NONE ? lane + bi * lanes : NONE);
    if (subgroupElect()) {
      expert[t * pc.k + j] = int(mi);
      weight[t * pc.k + j] = m;
    }
    sum += m;
    if (mi != NONE && mi % lanes == lane) {  // this lane's best was taken: drop it and find its next best
      const uint taken = bi;
      bv = -1.0;
      bi = NONE;
      for (uint i = 0u; i < PER; ++i) {
        if (i == taken) v[i] = -1.0;
        else if (v[i] > bv) {
          bv = v[i];
          bi = i;
        }
      }
    }
  }
  // A NaN or +Inf logit makes the softmax's sum NaN: every weight is NaN then (no route is silently finite).
  if (subgroupElect())
    for (uint j = 0u; j < pc.k; ++j) weight[t * pc.k + j] = isnan(s) ? s : weight[t * pc.k + j] / sum;
}
