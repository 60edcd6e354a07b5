// VK_KHR_cooperative_matrix through GL_EXT_spirv_intrinsics, for Debian 12's glslc (no GL_KHR_cooperative_matrix):
// 16 x 16 matrices of f16 (A, B) and f32 (accumulator) over a subgroup, and the operations used:
//   types hl_cm_a, hl_cm_b, hl_cm_acc; hl_cm_fill(v); hl_cm_muladd(a, b, c) = a * b + c;
//   HL_CM_LOAD_A/B(dst, arr, i, layout, stride): dst = the matrix at element i of shared array arr, element
//     (r, c) at arr[i + r * stride + c] (HL_CM_ROW_MAJOR) or arr[i + c * stride + r] (HL_CM_COL_MAJOR);
//   HL_CM_STORE(arr, i, m, layout, stride): the reverse, for an accumulator into a shared f32 array;
//   HL_CM_LOAD_ACC(dst, arr, i, layout, stride): an accumulator from a shared f32 array (e.g. after scaling rows).
// Only for shaders named *_cm.comp: runtime/CMakeLists.txt compiles those without spirv-opt (it predates the
// opcodes) and runs hybridlab_spirv_coopmat (runtime/vulkan/spirv_coopmat.h), which turns the marker component
// types 0x7F16u / 0x7F32u into OpTypeFloat 16 / 32 and the literal operands into constants. The including
// shader must also say `#pragma use_vulkan_memory_model` (cooperative matrices require that memory model).
// With HL_CM_EMULATE defined, the same operations without cooperative matrices (for checking a kernel's tiling
// on devices without them): A and B stay references to their shared elements, each invocation owns some
// accumulator elements; the same f16 inputs and f32 accumulation in k order.
#ifndef HL_COOPMAT_GLSL
#define HL_COOPMAT_GLSL

#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require

const uint HL_CM = 16u;                                // rows = columns = depth of every matrix here
const uint HL_CM_ROW_MAJOR = 0u, HL_CM_COL_MAJOR = 1u;  // MemoryLayout operands

#ifdef HL_CM_EMULATE
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require

// A and B: where their elements are, uvec4(array id, first element, layout, stride), read through
// hl_cm_read(id, index), which the including shader defines over its shared arrays, with const uint
// HL_CM_ID_<array name> ids. Valid while those elements stay unchanged: the kernels here overwrite a tile only
// after a barrier, which real loads need anyway.
#define hl_cm_a uvec4
#define hl_cm_b uvec4
// The accumulator: this invocation's elements e = lane + j * subgroup size, j < 256 / subgroup size (subgroups
// of at least 8 invocations: the host checks).
#define hl_cm_acc float[32]
#define HL_CM_AT(mem_layout, stride, r, c) ((mem_layout) == HL_CM_ROW_MAJOR ? (r) * (stride) + (c) : (c) * (stride) + (r))
#define HL_CM_LOAD_A(dst, arr, i, mem_layout, stride) dst = uvec4(HL_CM_ID_##arr, i, mem_layout, stride)
#define HL_CM_LOAD_B HL_CM_LOAD_A
#define HL_CM_STORE(arr, i, m, mem_layout, stride)                                                     \
  for (uint hl_e = gl_SubgroupInvocationID, hl_j = 0u; hl_e < 256u; hl_e += gl_SubgroupSize, ++hl_j) \
    arr[(i) + HL_CM_AT(mem_layout, stride, hl_e / 16u, hl_e % 16u)] = m[hl_j]
#define HL_CM_LOAD_ACC(dst, arr, i, mem_layout, stride)                                                  \
  for (uint hl_e = gl_SubgroupInvocationID, hl_j = 0u; hl_e < 256u; hl_e += gl_SubgroupSize, ++hl_j) \
    dst[hl_j] = arr[(i) + HL_CM_AT(mem_layout, stride, hl_e / 16u, hl_e % 16u)]

float hl_cm_read(uint id, uint index);

float[32] hl_cm_fill(float v) {
  float m[32];
  for (uint j = 0u; j < 32u; ++j) m[j] = v;
  return m;
}

float[32] hl_cm_muladd(uvec4 a, uvec4 b, float c[32]) {
  for (uint e = gl_SubgroupInvocationID, j = 0u; e < 256u; e += gl_SubgroupSize, ++j) {
    const uint r = e / 16u, n = e % 16u;
    float s = c[j];
    [[unroll]] for (uint k = 0u; k < 16u; ++k)
      s += hl_cm_read(a.x, a.y + HL_CM_AT(a.z, a.w, r, k)) * hl_cm_read(b.x, b.y + HL_CM_AT(b.z, b.w, k, n));
    c[j] = s;
  }
  return c;
}

#else
#extension GL_EXT_spirv_intrinsics : require

// OpTypeCooperativeMatrixKHR (component type, scope 3 = subgroup, rows, columns, use: 0 A, 1 B, 2 accumulator).
#define HL_CM_EXT extensions = ["SPV_KHR_cooperative_matrix"], capabilities = [6022]
#define hl_cm_a spirv_type(HL_CM_EXT, id = 4456, 0x7F16u, 3u, 16u, 16u, 0u)
#define hl_cm_b spirv_type(HL_CM_EXT, id = 4456, 0x7F16u, 3u, 16u, 16u, 1u)
#define hl_cm_acc spirv_type(HL_CM_EXT, id = 4456, 0x7F32u, 3u, 16u, 16u, 2u)

// OpCooperativeMatrixLoadKHR from element `p` of a shared array: element (i, j) is p[i * stride + j]
// (row-major) or p[j * stride + i] (column-major); p and the stride in bytes must be multiples of 16 bytes.
spirv_instruction(HL_CM_EXT, id = 4457) hl_cm_a hl_cm_load_a(spirv_by_reference float16_t p, uint mem_layout, uint stride);
spirv_instruction(HL_CM_EXT, id = 4457) hl_cm_b hl_cm_load_b(spirv_by_reference float16_t p, uint mem_layout, uint stride);
spirv_instruction(HL_CM_EXT, id = 4457) hl_cm_acc hl_cm_load_acc(spirv_by_reference float p, uint mem_layout, uint stride);
// OpCooperativeMatrixStoreKHR of an accumulator to element `p` of a shared f32 array, same addressing.
spirv_instruction(HL_CM_EXT, id = 4458) void hl_cm_store(spirv_by_reference float p, hl_cm_acc m, uint mem_layout, uint stride);
// OpCooperativeMatrixMulAddKHR: a * b + c, f32 accumulation.
spirv_instruction(HL_CM_EXT, id = 4459) hl_cm_acc hl_cm_muladd(hl_cm_a a, hl_cm_b b, hl_cm_acc c);
// OpCompositeConstruct with one constituent: every element = v.
spirv_instruction(id = 80) hl_cm_acc hl_cm_fill(float v);

#define HL_CM_LOAD_A(dst, arr, i, mem_layout, stride) dst = hl_cm_load_a(arr[i], mem_layout, stride)
#define HL_CM_LOAD_B(dst, arr, i, mem_layout, stride) dst = hl_cm_load_b(arr[i], mem_layout, stride)
#define HL_CM_STORE(arr, i, m, mem_layout, stride) hl_cm_store(arr[i], m, mem_layout, stride)
#define HL_CM_LOAD_ACC(dst, arr, i, mem_layout, stride) dst = hl_cm_load_acc(arr[i], mem_layout, stride)
#endif  // HL_CM_EMULATE

#endif
