// ggml tensor element types and the block formats used by llama.cpp's Q4_K_M files, bit-exact to ggml.
//
// Type ids, block sizes, block byte counts and names follow ggml (ggml.h enum ggml_type, ggml.c type_traits).
// Every ggml type that can appear in a GGUF file is *known* (so a file of any type can be opened and its sizes
// checked); only F32, F16, BF16, Q8_0, Q4_K, Q5_K and Q6_K are *supported* by dequantize_row/quantize_row.
//
// Block layouts (little-endian, packed, no padding):
//   Q8_0  32 values,  34 bytes: { f16 d; int8 qs[32]; }                                  y = d*q
//   Q4_K 256 values, 144 bytes: { f16 d; f16 dmin; u8 scales[12]; u8 qs[128]; }          y = (d*sc)*q - (dmin*m)
//   Q5_K 256 values, 176 bytes: { f16 d; f16 dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]; }
//   Q6_K 256 values, 210 bytes: { u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d; }        y = (d*sc)*(q-32)
// K-quant 6-bit scale/min packing (sub-block j of 8), as ggml's get_scale_min_k4:
//   j<4: sc = scales[j] & 63,                               m = scales[j+4] & 63
//   j>=4: sc = (scales[j+4] & 15) | (scales[j-4] >> 6) << 4, m = (scales[j+4] >> 4) | (scales[j] >> 6) << 4
// Products are evaluated in float in exactly ggml's order; the library is compiled with -ffp-contract=off so
// no FMA changes the rounding.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "quant/error.h"

namespace hl::quant {

enum class Type : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15,
  IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20, IQ3_S = 21, IQ2_S = 22, IQ4_XS = 23,
  I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28, IQ1_M = 29, BF16 = 30,
  TQ1_0 = 34, TQ2_0 = 35, MXFP4 = 39,
};

inline constexpr int64_t QK8_0 = 32;
inline constexpr int64_t QK_K = 256;

// ---- type table ----------------------------------------------------------------------------------------------
bool is_known_type(uint32_t id);                 // a ggml type id a GGUF file may use
Type type_from_id(uint32_t id);                  // Error "unknown ggml type id N" if not known
bool is_supported(Type t);                       // dequantize_row / quantize_row implemented
const char* type_name(Type t);                   // ggml's spelling: "f32", "q8_0", "q4_K", "bf16", ...
Type type_from_name(std::string_view name);      // case-insensitive; Error "unknown type name" otherwise
int64_t block_size(Type t);                      // values per block (1 for F32/F16/BF16, 32, 256)
size_t block_bytes(Type t);                      // bytes per block
size_t row_bytes(Type t, int64_t n);             // Error unless n >= 0 and n % block_size == 0

// ---- rows ----------------------------------------------------------------------------------------------------
// n values (a multiple of block_size(t)); Error for an unsupported type (naming it) or a bad n.
void dequantize_row(Type t, const void* src, float* dst, int64_t n);
// Block types need finite input (Error otherwise); F32/F16/BF16 carry inf/NaN. Scale searches are described in
// blocks.cpp; results are deterministic.
void quantize_row(Type t, const float* src, void* dst, int64_t n);

// A row with its blocks' fields grouped by field ("planar"): every block's first field, then every block's second,
// ... (Q6_K: all ql[128], all qh[64], all scales[16], all d), the bytes themselves unchanged, row_bytes(t, n) in
// all. GPU kernels read such rows with aligned wide loads where a block's own size (Q6_K's 210 bytes, Q8_0's 34)
// misaligns every field after the first block (ops/matmul/qmatvec_planar.glsl). Block types only (Error
// otherwise); planar_fields gives the field sizes in order, for the kernels' plane offsets.
std::vector<size_t> planar_fields(Type t);
void planar_row(Type t, const void* src, void* dst, int64_t n);

// ---- scalar conversions (exact decode, round-to-nearest-even encode) -----------------------------------------
inline float fp16_to_fp32(uint16_t h) {  // branch-free (masks), so that row loops vectorize
  const uint32_t em = h & 0x7fffu;
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t infnan = 0u - uint32_t(em >= 0x7c00u);                  // all ones for inf/NaN
  const uint32_t subnormal = 0u - uint32_t(em < 0x0400u);                // all ones for zero/subnormal
  const uint32_t normal = (em << 13) + 0x38000000u + (infnan & 0x38000000u);  // rebias 15 -> 127 (inf/NaN: 255)
  const uint32_t sub = std::bit_cast<uint32_t>(float(em) * 0x1p-24f);    // exact for em < 0x400
  return std::bit_cast<float>((normal & ~subnormal) | (sub & subnormal) | sign);
}

inline uint16_t fp32_to_fp16(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return uint16_t(sign | 0x7e00u | ((a >> 13) & 0x3ffu));  // NaN -> quiet NaN
  if (a >= 0x477ff000u) return uint16_t(sign | 0x7c00u);   // >= 65520 rounds to inf (65504 is the max)
  if (a >= 0x38800000u) {                                  // normal half: rebias, round mantissa at bit 13
    const uint32_t r = a - 0x38000000u;
    return uint16_t(sign | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13));
  }
  if (a < 0x33000000u) return sign;                        // <= 2^-25 rounds to zero
  // subnormal half: value = m * 2^(e-150), unit 2^-24, so k = m >> (126 - e), rounded to nearest even
  const uint32_t e = a >> 23;
  const uint32_t m = (a & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126u - e;                         // 14..24
  uint32_t k = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (k & 1u))) ++k;        // may carry into the smallest normal: correct
  return uint16_t(sign | k);
}

inline float bf16_to_fp32(uint16_t h) { return std::bit_cast<float>(uint32_t(h) << 16); }

inline uint16_t fp32_to_bf16(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);  // NaN -> quiet NaN
  return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// Unpack the 6-bit scale and min of sub-block j (0..7) of a Q4_K/Q5_K super-block.
inline void get_scale_min_k4(int j, const uint8_t* scales, uint8_t& sc, uint8_t& m) {
  if (j < 4) {
    sc = scales[j] & 63;
    m = scales[j + 4] & 63;
  } else {
    sc = uint8_t((scales[j + 4] & 0x0f) | ((scales[j - 4] >> 6) << 4));
    m = uint8_t((scales[j + 4] >> 4) | ((scales[j] >> 6) << 4));
  }
}

}  // namespace hl::quant
