// Build-time SPIR-V fix-up for cooperative-matrix shaders (ops/<op>/*_cm.comp).
//
// Debian 12's glslc (glslang 11.13) has no GL_KHR_cooperative_matrix, but GL_EXT_spirv_intrinsics lets a
// shader spell OpTypeCooperativeMatrixKHR and its instructions by opcode. Two gaps remain, both closed here:
// - a spirv_type parameter cannot be a type, so the component type is written as a marker constant
//   (0x7F16u: f16, 0x7F32u: f32; HL_CM_* in ops/shaders/coopmat.glsl);
// - this glslang emits spirv_type's constant parameters as literal words, where SPIR-V wants ids of constants
//   (scope, rows, columns, use).
// patch_cooperative_matrix rewrites each such OpTypeCooperativeMatrixKHR into the valid form, declaring what
// it refers to (OpTypeFloat 16/32, OpTypeInt 32 0, OpConstants) ahead of it, and makes sure the module
// declares OpCapability CooperativeMatrixKHR, OpExtension "SPV_KHR_cooperative_matrix" and, for f16
// components, OpCapability Float16. A type already in the id form (a later glslang: ids of constants) only
// gets its marker component replaced; a valid type is left alone.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace hl::vk::spirv {

inline constexpr uint32_t kMarkerF16 = 0x7F16, kMarkerF32 = 0x7F32;
inline constexpr uint32_t kOpTypeCooperativeMatrixKHR = 4456, kCapabilityCooperativeMatrixKHR = 6022;

// The patched module; throws std::runtime_error on a malformed module or a marker it cannot resolve.
std::vector<uint32_t> patch_cooperative_matrix(std::span<const uint32_t> words);

// "" when every OpTypeCooperativeMatrixKHR of the module refers, by ids defined earlier, to an OpTypeFloat
// (16 or 32 bits) and to OpConstants of a 32-bit integer type (scope 3 = subgroup, use 0..2), and the
// capability and extension are declared; else the first problem found. A structural check, for tests and
// the patch tool (spirv-val 2023.1 of Debian 12 predates these opcodes).
std::string check_cooperative_matrix(std::span<const uint32_t> words);

// The words as a C array initializer, as `glslc -mfmt=c` writes them (for #include in the registry).
std::string c_array(std::span<const uint32_t> words);

}  // namespace hl::vk::spirv
