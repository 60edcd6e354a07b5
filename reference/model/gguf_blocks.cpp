// Q5_0 / Q5_1 in ggml's order of float operations, rounded at every step like the format layer (which is built with
// -ffp-contract=off): no FMA may fuse x*id + 16.5.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif
#include "model/gguf_blocks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

namespace hl {

namespace {

using quant::Type;

constexpr int kQ5 = 32;

// kAffine = false: Q5_0 (y = d*(q-16)); true: Q5_1 (y = d*q + m).
template <bool kAffine> void quant_q5(const float* x, uint8_t* b) {
  float lo = FLT_MAX, hi = -FLT_MAX, amax = 0, max = 0;
  for (int j = 0; j < kQ5; ++j) {
    lo = std::min(lo, x[j]), hi = std::max(hi, x[j]);
    if (amax < std::fabs(x[j])) amax = std::fabs(x[j]), max = x[j];
  }
  const float d = kAffine ? (hi - lo) / 31 : max / -16;
  const float id = d != 0 ? 1.0f / d : 0.0f;
  const uint16_t dh = quant::fp32_to_fp16(d);
  std::memcpy(b, &dh, 2);
  if constexpr (kAffine) {
    const uint16_t mh = quant::fp32_to_fp16(lo);
    std::memcpy(b + 2, &mh, 2);
  }
  uint8_t* qs = b + (kAffine ? 8 : 6);
  uint32_t qh = 0;
  for (int j = 0; j < kQ5 / 2; ++j) {
    int q[2];
    for (int h = 0; h < 2; ++h) {
      const float v = x[j + 16 * h];
      q[h] = kAffine ? int((v - lo) * id + 0.5f) : std::min(31, int(v * id + 16.5f));  // truncation, as ggml
      qh |= uint32_t((q[h] >> 4) & 1) << (j + 16 * h);
    }
    qs[j] = uint8_t((q[0] & 0x0f) | ((q[1] & 0x0f) << 4));
  }
  std::memcpy(b + (kAffine ? 4 : 2), &qh, 4);
}

template <bool kAffine> void dequant_q5(const uint8_t* b, float* y) {
  uint16_t dh, mh = 0;
  std::memcpy(&dh, b, 2);
  if constexpr (kAffine) std::memcpy(&mh, b + 2, 2);
  const float d = quant::fp16_to_fp32(dh), m = quant::fp16_to_fp32(mh);
  uint32_t qh;
  std::memcpy(&qh, b + (kAffine ? 4 : 2), 4);
  const uint8_t* qs = b + (kAffine ? 8 : 6);
  for (int j = 0; j < kQ5 / 2; ++j)
    for (int h = 0; h < 2; ++h) {
      const int q = ((qs[j] >> (4 * h)) & 0x0f) | int(((qh >> (j + 16 * h)) & 1) << 4);
      y[j + 16 * h] = kAffine ? float(q) * d + m : float(q - 16) * d;
    }
}

bool is_q5(Type t) { return t == Type::Q5_0 || t == Type::Q5_1; }

template <class F> void each_q5_block(Type t, int64_t n, F&& f) {
  const size_t bytes = quant::row_bytes(t, n) / size_t(n / kQ5);  // validates n
  for (int64_t i = 0; i < n / kQ5; ++i) f(i * kQ5, size_t(i) * bytes);
}

}  // namespace

bool gguf_can_dequantize(Type t) { return quant::is_supported(t) || is_q5(t); }

void gguf_dequantize_row(Type t, const void* src, float* dst, int64_t n) {
  if (!is_q5(t)) return quant::dequantize_row(t, src, dst, n);
  const auto* s = static_cast<const uint8_t*>(src);
  if (n == 0) return;
  each_q5_block(t, n, [&](int64_t v, size_t o) {
    t == Type::Q5_0 ? dequant_q5<false>(s + o, dst + v) : dequant_q5<true>(s + o, dst + v);
  });
}

void gguf_quantize_row(Type t, const float* src, void* dst, int64_t n) {
  if (!is_q5(t)) return quant::quantize_row(t, src, dst, n);
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(src[i]))
      throw quant::Error(fmt::format("hl::quant: quantize_row {}: non-finite value {} at index {}", quant::type_name(t),
                                     src[i], i));
  auto* d = static_cast<uint8_t*>(dst);
  if (n == 0) return;
  each_q5_block(t, n, [&](int64_t v, size_t o) {
    t == Type::Q5_0 ? quant_q5<false>(src + v, d + o) : quant_q5<true>(src + v, d + o);
  });
}

}  // namespace hl
