// Shared helpers for compute shaders: #include "common.glsl".
#ifndef HL_COMMON_GLSL
#define HL_COMMON_GLSL

#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

uint hl_div_up(uint n, uint d) { return (n + d - 1u) / d; }

// The linear index of this workgroup in a 2-D grid (the host splits large counts over y, because
// maxComputeWorkGroupCount[0] is only guaranteed to be 65535; see ops/vulkan_variant.h grid()).
uint hl_group_index() { return gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x; }

// Subgroups in this workgroup. Mesa 22.3's lavapipe reports gl_NumSubgroups = floor(size / subgroup)
// when the last subgroup is partial (its gl_SubgroupID still counts it), hence the max.
uint hl_num_subgroups() {
  const uint size = gl_WorkGroupSize.x * gl_WorkGroupSize.y * gl_WorkGroupSize.z;
  return max(gl_NumSubgroups, (size + gl_SubgroupSize - 1u) / gl_SubgroupSize);
}

// hl_workgroup_sum(v): the sum of v over the workgroup, returned to every invocation. Correct for any
// subgroup size (8 on lavapipe, 32 on NVIDIA, 32 or 64 on AMD): subgroupAdd within each subgroup,
// one partial per subgroup (hl_num_subgroups() of them, never a constant), then subgroup 0 adds those.
// Define HL_WORKGROUP_SUM_SIZE to the workgroup size before including this file, and call it from
// uniform control flow (it contains barriers).
#ifdef HL_WORKGROUP_SUM_SIZE
shared float hl_partials[HL_WORKGROUP_SUM_SIZE];  // >= the subgroup count for any subgroup size >= 1
shared float hl_total;

float hl_workgroup_sum(float v) {
  float s = subgroupAdd(v);
  if (subgroupElect()) hl_partials[gl_SubgroupID] = s;
  barrier();
  if (gl_SubgroupID == 0u) {
    float t = 0.0;
    for (uint i = gl_SubgroupInvocationID; i < hl_num_subgroups(); i += gl_SubgroupSize) t += hl_partials[i];
    t = subgroupAdd(t);
    if (subgroupElect()) hl_total = t;
  }
  barrier();
  return hl_total;
}
#endif

#endif
