// moe_router (vulkan:softmax_topk): one workgroup per token. p = softmax(logits[t]) over all E experts
// (max-subtracted, f32, kept in shared memory), then k rounds of a workgroup argmax (largest p, lowest
// expert id among equal p: the reference's order), each removing its winner; weights p_e / sum of the k
// chosen (summed in slot order, as the reference does).
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint EMAX = 256;  // capacity of p; the host passes E
#define HL_WORKGROUP_SUM_SIZE WG
#include "common.glsl"

layout(std430, binding = 0) readonly buffer L { float logits[]; };
layout(std430, binding = 1) writeonly buffer Ex { int expert[]; };
layout(std430, binding = 2) buffer Wt { float weight[]; };  // invocation 0 writes p, then rescales it
layout(push_constant) uniform Push { uint T, E, k; } pc;

const uint NONE = 0xffffffffu;
shared float p[EMAX];
shared float part_v[WG];  // one partial per subgroup (a subgroup has at least one invocation)
shared uint part_i[WG];
shared float best_v;
shared uint best_i;

// (v, i) beats the best so far: larger value, or equal value and lower index.
bool beats(float v, uint i, float bv, uint bi) { return v > bv || (v == bv && i < bi); }

// The workgroup's best (v, i) pair; returns i, sets bv. Call from uniform control flow (it has barriers).
uint workgroup_argmax(float v, uint i, out float bv) {
  float m = subgroupMax(v);
  uint mi = subgroupMin(v == m ? i : NONE);
  if (subgroupElect()) {
    part_v[gl_SubgroupID] = m;
    part_i[gl_SubgroupID] = mi;
  }
  barrier();
  if (gl_SubgroupID == 0u) {
    float lv = uintBitsToFloat(0xff800000u);  // -inf
    uint li = NONE;
    for (uint s = gl_SubgroupInvocationID; s < hl_num_subgroups(); s += gl_SubgroupSize)
      if (beats(part_v[s], part_i[s], lv, li)) {
        lv = part_v[s];
        li = part_i[s];
      }
    m = subgroupMax(lv);
    mi = subgroupMin(lv == m ? li : NONE);
    if (subgroupElect()) {
      best_v = m;
      best_i = mi;
    }
  }
  barrier();
  bv = best_v;
  return best_i;
}

void main() {
  const uint t = hl_group_index();
  if (t >= pc.T) return;  // uniform per workgroup
  const uint lid = gl_LocalInvocationID.x, row = t * pc.E;
  const float neg_inf = uintBitsToFloat(0xff800000u);

  float lv = neg_inf, mx;
  for (uint e = lid; e < pc.E; e += WG) lv = max(lv, logits[row + e]);
  workgroup_argmax(lv, 0u, mx);
  float s = 0.0;
  for (uint e = lid; e < pc.E; e += WG) {
    p[e] = exp(logits[row + e] - mx);
    s += p[e];
  }
  s = hl_workgroup_sum(s);
  // Each invocation touches only its own p[e] (e = lid mod WG) until the argmax rounds: no barrier needed.
  for (uint e = lid; e < pc.E; e += WG) p[e] /= s;

  float sum = 0.0;
  for (uint j = 0u; j < pc.k; ++j) {
    lv = neg_inf;
    uint li = NONE;
    for (uint e = lid; e < pc.E; e += WG)
      if (p[e] > lv) {  // ascending e: the first of equal values (lowest id) stays
        lv = p[e];
        li = e;
      }
    float pe;
    const uint e = workgroup_argmax(lv, li, pe);
    if (lid == 0u) {
      expert[t * pc.k + j] = int(e);
      weight[t * pc.k + j] = pe;
      sum += pe;
    }
    if (e < pc.E && e % WG == lid) p[e] = -1.0;  // removed; p >= 0 otherwise. Only its owner reads p[e].
  }
  if (lid == 0u)
    for (uint j = 0u; j < pc.k; ++j) weight[t * pc.k + j] /= sum;
}
