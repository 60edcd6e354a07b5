// hl_group_sum(v, L): the sum of v over an aligned group of GROUP consecutive roles of the workgroup,
// returned to every member. Roles come from hl_role(): L = subgroup id * subgroup size + lane, so a group
// of at most a subgroup's size lies in one subgroup (subgroups are full but perhaps the last, as on every
// implementation) and is summed by a shuffle butterfly without barriers; a larger group is whole subgroups (both
// powers of two), each summed by subgroupAdd, their partials added through shared memory behind one barrier (a tree
// of log2(GROUP) barrier levels cost a head of 128 values on 128 invocations most of its time). Before including:
// #include "common.glsl", constants WG (workgroup size) and GROUP (a power of two dividing WG). Call from uniform
// control flow (the shared-memory path has barriers).
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
  const float part = subgroupAdd(v);
  if (subgroupElect()) hl_group_red[gl_SubgroupID] = part;
  barrier();
  const uint per = GROUP / gl_SubgroupSize, first = (L / GROUP) * per;
  float t = 0.0;
  for (uint i = 0u; i < per; ++i) t += hl_group_red[first + i];
  barrier();  // read before the next call overwrites
  return t;
}

#endif
