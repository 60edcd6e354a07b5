// Rows of a GGUF model file as floats and back: every type of the format layer (quant/blocks.h: F32, F16, BF16,
// Q8_0, Q4_K, Q5_K, Q6_K) plus Q5_0 and Q5_1, the types llama-quantize falls back to when a row is not a multiple
// of 256 values (Q4_K -> Q5_0, Q5_K -> Q5_1; Q6_K -> Q8_0). Q5_0 / Q5_1 follow ggml's quantize_row_q5_{0,1}_ref
// and dequantize_row_q5_{0,1} bit for bit (checked against gguf-py); they would sit better in quant/blocks.cpp.
//   Q5_0  32 values, 22 bytes: { f16 d; u8 qh[4]; u8 qs[16]; }          y = d*(q - 16)
//   Q5_1  32 values, 24 bytes: { f16 d; f16 m; u8 qh[4]; u8 qs[16]; }   y = d*q + m
// value j < 16: low nibble of qs[j] and bit j of qh (u32, little-endian); value j + 16: high nibble of qs[j] and
// bit j + 16 of qh.
#pragma once
#include <cstdint>

#include "quant/blocks.h"

namespace hl {

bool gguf_can_dequantize(quant::Type t);
// n values (a multiple of the block size); an unsupported type is an hl::quant::Error naming it.
void gguf_dequantize_row(quant::Type t, const void* src, float* dst, int64_t n);
void gguf_quantize_row(quant::Type t, const float* src, void* dst, int64_t n);

}  // namespace hl
