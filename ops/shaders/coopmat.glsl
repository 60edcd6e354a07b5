// Cooperative matrices (GL_KHR_cooperative_matrix): 16 x 16 matrices of f16 (A, B) and f32 (accumulator) over a
// subgroup, and the operations used:
//   types hl_cm_a, hl_cm_b, hl_cm_acc; hl_cm_fill(v); hl_cm_muladd(a, b, c) = a * b + c;
//   HL_CM_LOAD_A/B(dst, arr, i, layout, stride): dst = the matrix at element i of shared array arr, element
//     (r, c) at arr[i + r * stride + c] (HL_CM_ROW_MAJOR) or arr[i + c * stride + r] (HL_CM_COL_MAJOR);
//   HL_CM_STORE(arr, i, m, layout, stride): the reverse, for an accumulator into a shared f32 array;
//   HL_CM_LOAD_ACC(dst, arr, i, layout, stride): an accumulator from a shared f32 array (e.g. after scaling rows).
//   HL_CM_STORE_F16(arr, i, m, layout, stride): an accumulator rounded to f16 into an array of f16 vectors of
//     HL_CM_VEC components (offset and stride in vectors, like the loads'; emulated through hl_cm_write(id, element,
//     value), which the including shader defines over its arrays);
//   HL_CM_SCALE(m, s): m = s m;
//   HL_CM_ADD(m, x): m = m + x, accumulators.
// The arrays may be storage buffers as well as shared memory.
// Shaders named *_cm.comp are compiled by the newer glslang from the project's venv (runtime/CMakeLists.txt:
// Debian 12's glslc predates GL_KHR_cooperative_matrix), optimised and validated. The including shader must also
// say `#pragma use_vulkan_memory_model` (cooperative matrices require that memory model).
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
// Arrays of vectors (HL_CM_VEC components per element, as the real loads count them): offsets and strides in
// elements, kept here in scalars.
#ifndef HL_CM_VEC
#define HL_CM_VEC 1u
#endif
#define HL_CM_LOAD_A(dst, arr, i, mem_layout, stride) \
  dst = uvec4(HL_CM_ID_##arr, (i) * HL_CM_VEC, mem_layout, (stride) * HL_CM_VEC)
#define HL_CM_LOAD_B HL_CM_LOAD_A
#define HL_CM_STORE(arr, i, m, mem_layout, stride)                                                     \
  for (uint hl_e = gl_SubgroupInvocationID, hl_j = 0u; hl_e < 256u; hl_e += gl_SubgroupSize, ++hl_j) \
    arr[(i) + HL_CM_AT(mem_layout, stride, hl_e / 16u, hl_e % 16u)] = m[hl_j]
#define HL_CM_LOAD_ACC(dst, arr, i, mem_layout, stride)                                                  \
  for (uint hl_e = gl_SubgroupInvocationID, hl_j = 0u; hl_e < 256u; hl_e += gl_SubgroupSize, ++hl_j) \
    dst[hl_j] = arr[(i) + HL_CM_AT(mem_layout, stride, hl_e / 16u, hl_e % 16u)]
#define HL_CM_STORE_F16(arr, i, m, mem_layout, stride)                                                             \
  for (uint hl_e = gl_SubgroupInvocationID, hl_j = 0u; hl_e < 256u; hl_e += gl_SubgroupSize, ++hl_j)             \
    hl_cm_write(HL_CM_ID_##arr, (i) * HL_CM_VEC + HL_CM_AT(mem_layout, (stride) * HL_CM_VEC, hl_e / 16u, hl_e % 16u), \
                float16_t(m[hl_j]))
#define HL_CM_SCALE(m, s) \
  for (uint hl_j = 0u; hl_j < 32u; ++hl_j) m[hl_j] *= (s)
#define HL_CM_ADD(m, x) \
  for (uint hl_j = 0u; hl_j < 32u; ++hl_j) m[hl_j] += (x)[hl_j]

float hl_cm_read(uint id, uint index);
void hl_cm_write(uint id, uint index, float16_t value);

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
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require

#define hl_cm_a coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define hl_cm_b coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define hl_cm_acc coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define HL_CM_LAYOUT(mem_layout) \
  ((mem_layout) == HL_CM_ROW_MAJOR ? gl_CooperativeMatrixLayoutRowMajor : gl_CooperativeMatrixLayoutColumnMajor)

hl_cm_acc hl_cm_fill(float v) { return hl_cm_acc(v); }
hl_cm_acc hl_cm_muladd(hl_cm_a a, hl_cm_b b, hl_cm_acc c) { return coopMatMulAdd(a, b, c); }

#define HL_CM_LOAD_A(dst, arr, i, mem_layout, stride) coopMatLoad(dst, arr, i, stride, HL_CM_LAYOUT(mem_layout))
#define HL_CM_LOAD_B HL_CM_LOAD_A
#define HL_CM_LOAD_ACC HL_CM_LOAD_A
#define HL_CM_STORE(arr, i, m, mem_layout, stride) coopMatStore(m, arr, i, stride, HL_CM_LAYOUT(mem_layout))
#define HL_CM_STORE_F16(arr, i, m, mem_layout, stride)                                                            \
  coopMatStore(coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(m), arr, i, stride, \
               HL_CM_LAYOUT(mem_layout))
#define HL_CM_SCALE(m, s) m = (m) * (s)
#define HL_CM_ADD(m, x) m = (m) + (x)
#endif  // HL_CM_EMULATE

#endif
