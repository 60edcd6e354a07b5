// 4-way 8-bit integer dot products (VK_KHR_shader_integer_dot_product's OpSDot through SPIR-V intrinsics: Debian 12's
// glslc has no GLSL built-in for it). The device must have shaderIntegerDotProduct.
#ifndef HL_INT_DOT_GLSL
#define HL_INT_DOT_GLSL
#extension GL_EXT_spirv_intrinsics : require

// OpSDot with PackedVectorFormat4x8Bit: the dot product of four signed bytes by four signed bytes.
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4450) int sdot4x8(int a, int b, spirv_literal int format);
int hlq_dot16(uvec4 q, uvec4 x) {
  return sdot4x8(int(q.x), int(x.x), 0) + sdot4x8(int(q.y), int(x.y), 0) + sdot4x8(int(q.z), int(x.z), 0) +
         sdot4x8(int(q.w), int(x.w), 0);
}

// float(v) for |v| < 2^22 without a conversion instruction (quarter rate on NVIDIA): v added to the bits of 1.5 * 2^23
// lands in its mantissa, exactly.
float hl_small_int_float(int v) { return intBitsToFloat(v + 0x4B400000) - 12582912.0; }

#endif
