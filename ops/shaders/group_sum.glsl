// hl_group_sum(v, L): the sum of v over an aligned group of GROUP consecutive roles of the workgroup,
// returned to every member. Roles come from hl_role(): L = subgroup id * subgroup size + lane, so a group
// of at most a subgroup's size lies in one subgroup (subgroups are full but perhaps the last, as on every
// implementation) and is summed by a shuffle butterfly without barriers; larger groups go through
// shared memory. Before including: #include "common.glsl", constants WG (workgroup size) and GROUP (a
// power of two dividing WG). Call from uniform control flow (the shared-memory path has barriers).
#ifndef HL_GROUP_SUM_GLSL
#define HL_GROUP_SUM_GLSL

#extension GL_KHR_shader_subgroup_shuffle : require

uint hl_role() { return gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID; }

shared float hl_group_red[WG];

float hl_group_sum(float v, uint L) {
  if (GROUP <= gl_SubgroupSize) {  // uniform
    for (uint m = GROUP / 2u; m > 0u; m >>= 1) v += subgroupShuffleXor(v, m);
    return v;
  }
  hl_group_red[L] = v;
  barrier();
  for (uint m = GROUP / 2u; m > 0u; m >>= 1) {
    if (L % GROUP < m) hl_group_red[L] += hl_group_red[L + m];
    barrier();
  }
  v = hl_group_red[L - L % GROUP];
  barrier();  // read before the next call overwrites
  return v;
}

#endif
