// VK_KHR_cooperative_matrix through GL_EXT_spirv_intrinsics, for Debian 12's glslc (no GL_KHR_cooperative_matrix):
// 16 x 16 matrices of f16 (A, B) and f32 (accumulator) over a subgroup, and the four instructions used.
// Only for shaders named *_cm.comp: gpu/CMakeLists.txt compiles those without spirv-opt (it predates the
// opcodes) and runs hybridlab_spirv_coopmat (gpu/vulkan/spirv_coopmat.h), which turns the marker component
// types 0x7F16u / 0x7F32u into OpTypeFloat 16 / 32 and the literal operands into constants. The including
// shader must also say `#pragma use_vulkan_memory_model` (cooperative matrices require that memory model).
#ifndef HL_COOPMAT_GLSL
#define HL_COOPMAT_GLSL

#extension GL_EXT_spirv_intrinsics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require

const uint HL_CM = 16u;                                // rows = columns = depth of every matrix here
const uint HL_CM_ROW_MAJOR = 0u, HL_CM_COL_MAJOR = 1u;  // MemoryLayout operands

// OpTypeCooperativeMatrixKHR (component type, scope 3 = subgroup, rows, columns, use: 0 A, 1 B, 2 accumulator).
#define HL_CM_EXT extensions = ["SPV_KHR_cooperative_matrix"], capabilities = [6022]
#define hl_cm_a spirv_type(HL_CM_EXT, id = 4456, 0x7F16u, 3u, 16u, 16u, 0u)
#define hl_cm_b spirv_type(HL_CM_EXT, id = 4456, 0x7F16u, 3u, 16u, 16u, 1u)
#define hl_cm_acc spirv_type(HL_CM_EXT, id = 4456, 0x7F32u, 3u, 16u, 16u, 2u)

// OpCooperativeMatrixLoadKHR from element `p` of a shared array: element (i, j) is p[i * stride + j]
// (row-major) or p[j * stride + i] (column-major); p and the stride in bytes must be multiples of 16 bytes.
spirv_instruction(HL_CM_EXT, id = 4457) hl_cm_a hl_cm_load_a(spirv_by_reference float16_t p, uint mem_layout, uint stride);
spirv_instruction(HL_CM_EXT, id = 4457) hl_cm_b hl_cm_load_b(spirv_by_reference float16_t p, uint mem_layout, uint stride);
// OpCooperativeMatrixStoreKHR of an accumulator to element `p` of a shared f32 array, same addressing.
spirv_instruction(HL_CM_EXT, id = 4458) void hl_cm_store(spirv_by_reference float p, hl_cm_acc m, uint mem_layout, uint stride);
// OpCooperativeMatrixMulAddKHR: a * b + c, f32 accumulation.
spirv_instruction(HL_CM_EXT, id = 4459) hl_cm_acc hl_cm_muladd(hl_cm_a a, hl_cm_b b, hl_cm_acc c);
// OpCompositeConstruct with one constituent: every element = v.
spirv_instruction(id = 80) hl_cm_acc hl_cm_fill(float v);

#endif
