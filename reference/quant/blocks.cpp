// ggml block formats: type table, dequantizers (written from the format definitions in blocks.h) and
// round-to-nearest quantizers with a small per-sub-block scale search.
#include "quant/blocks.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>

namespace hl::quant {

namespace {

struct Traits {
  const char* name = nullptr;  // nullptr: not a ggml type id usable in a GGUF file
  int64_t blck = 0;
  size_t bytes = 0;
  bool supported = false;
};

constexpr uint32_t kMaxId = 40;

constexpr std::array<Traits, kMaxId> make_table() {
  std::array<Traits, kMaxId> t{};
  t[0] = {"f32", 1, 4, true};
  t[1] = {"f16", 1, 2, true};
  t[2] = {"q4_0", 32, 18};
  t[3] = {"q4_1", 32, 20};
  t[6] = {"q5_0", 32, 22};
  t[7] = {"q5_1", 32, 24};
  t[8] = {"q8_0", 32, 34, true};
  t[9] = {"q8_1", 32, 36};
  t[10] = {"q2_K", 256, 84};
  t[11] = {"q3_K", 256, 110};
  t[12] = {"q4_K", 256, 144, true};
  t[13] = {"q5_K", 256, 176, true};
  t[14] = {"q6_K", 256, 210, true};
  t[15] = {"q8_K", 256, 292};
  t[16] = {"iq2_xxs", 256, 66};
  t[17] = {"iq2_xs", 256, 74};
  t[18] = {"iq3_xxs", 256, 98};
  t[19] = {"iq1_s", 256, 50};
  t[20] = {"iq4_nl", 32, 18};
  t[21] = {"iq3_s", 256, 110};
  t[22] = {"iq2_s", 256, 82};
  t[23] = {"iq4_xs", 256, 136};
  t[24] = {"i8", 1, 1};
  t[25] = {"i16", 1, 2};
  t[26] = {"i32", 1, 4};
  t[27] = {"i64", 1, 8};
  t[28] = {"f64", 1, 8};
  t[29] = {"iq1_m", 256, 56};
  t[30] = {"bf16", 1, 2, true};
  t[34] = {"tq1_0", 256, 54};
  t[35] = {"tq2_0", 256, 66};
  t[39] = {"mxfp4", 32, 17};
  return t;
}
constexpr auto kTable = make_table();

const Traits& traits(Type t) {
  const auto id = static_cast<uint32_t>(t);
  if (!is_known_type(id)) throw Error(fmt::format("hl::quant: unknown ggml type id {}", id));
  return kTable[id];
}

void require_supported(Type t, const char* what) {
  if (!traits(t).supported)
    throw Error(fmt::format("hl::quant: {}: unsupported type {} (ggml id {})", what, type_name(t),
                            static_cast<uint32_t>(t)));
}

inline uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
inline void store_u16(uint8_t* p, uint16_t v) { std::memcpy(p, &v, 2); }
inline float load_f16(const uint8_t* p) { return fp16_to_fp32(load_u16(p)); }

inline int nearest_int(float x) { return static_cast<int>(std::nearbyint(x)); }

// ---- dequantizers (one super-block / block at a time) ----------------------------------------------------------

void dequant_q8_0(const uint8_t* b, float* y) {
  const float d = load_f16(b);
  const auto* qs = reinterpret_cast<const int8_t*>(b + 2);
  for (int j = 0; j < 32; ++j) y[j] = float(qs[j]) * d;
}

// Q4_K (kFive = false) and Q5_K (kFive = true): value 64g + 32h + l (h = 0, 1) is nibble h of qs[32g + l], plus
// for Q5_K bit (2g + h) of qh[l] as the 5th bit; sub-block 2g + h; y = (d*sc)*q - dmin*m.
template <bool kFive> void dequant_k_affine(const uint8_t* b, float* y) {
  const float d = load_f16(b);
  const float dmin = load_f16(b + 2);
  const uint8_t* scales = b + 4;
  const uint8_t* qh = b + 16;  // Q5_K only
  const uint8_t* qs = b + (kFive ? 48 : 16);
  for (int g = 0; g < 4; ++g, qs += 32, y += 64) {
    auto half = [&]<int h>() {  // h as a constant keeps the nibble shift out of the vectorized loop
      uint8_t sc, m;
      get_scale_min_k4(2 * g + h, scales, sc, m);
      const float dl = d * float(sc), ml = dmin * float(m);
      const int bit = 2 * g + h;
      float* yh = y + 32 * h;
      for (int l = 0; l < 32; ++l) {
        int q = (qs[l] >> (4 * h)) & 0x0f;
        if constexpr (kFive) q |= ((qh[l] >> bit) & 1) << 4;
        yh[l] = dl * float(q) - ml;
      }
    };
    half.template operator()<0>();
    half.template operator()<1>();
  }
}

void dequant_q6_k(const uint8_t* b, float* y) {
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  const auto* sc = reinterpret_cast<const int8_t*>(b + 192);
  const float d = load_f16(b + 208);
  float ds[16];
  for (int i = 0; i < 16; ++i) ds[i] = d * float(sc[i]);  // ggml: d * sc * q, left to right
  // value 128h + 32k + l: low nibble of ql[64h + 32(k%2) + l] (k < 2) or its high nibble (k >= 2), high 2 bits
  // at bit 2k of qh[32h + l], scale ds[(128h + 32k + l) / 16]
  for (int h = 0; h < 2; ++h, ql += 64, qh += 32, y += 128) {
    for (int k = 0; k < 4; ++k) {
      const uint8_t* qlk = ql + 32 * (k % 2);
      const int lo_shift = k < 2 ? 0 : 4, hi_shift = 2 * k;
      for (int half = 0; half < 2; ++half) {
        const float s = ds[8 * h + 2 * k + half];
        for (int l = 16 * half; l < 16 * half + 16; ++l)
          y[32 * k + l] = s * float((((qlk[l] >> lo_shift) & 0x0f) | (((qh[l] >> hi_shift) & 3) << 4)) - 32);
      }
    }
  }
}

// ---- quantizers --------------------------------------------------------------------------------------------------

// Q8_0: plain round-to-nearest, d = amax/127 (ggml's reference choice), values divided by the stored (f16) d.
void quant_q8_0(const float* x, uint8_t* b) {
  float amax = 0;
  for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
  const uint16_t dh = fp32_to_fp16(amax / 127.0f);
  const float d = fp16_to_fp32(dh);
  const float id = d > 0 ? 1.0f / d : 0.0f;
  store_u16(b, dh);
  auto* qs = reinterpret_cast<int8_t*>(b + 2);
  for (int j = 0; j < 32; ++j) qs[j] = int8_t(std::clamp(nearest_int(x[j] * id), -127, 127));
}

// Affine fit of one K-quant sub-block: x ~= s*L - m with L in [0, nmax], s >= 0, m >= 0.
// Scale search: over the range [min(xmin, 0), xmax] try the 21 inverse scales (nmax + 0.1k)/range, k = -10..10;
// for each, round to L, then solve least squares for (s, offset) with L fixed (offset clamped to <= 0, the format
// cannot add), and keep the candidate with the smallest squared error.
float fit_affine(const float* x, int n, int nmax, uint8_t* L, float& m_out) {
  float xmin = *std::min_element(x, x + n), xmax = *std::max_element(x, x + n);
  xmin = std::min(xmin, 0.0f);
  if (!(xmax > xmin)) {  // constant <= 0 (or all zero): offset only
    std::fill(L, L + n, uint8_t(0));
    m_out = -xmin;
    return 0;
  }
  float best_err = std::numeric_limits<float>::infinity(), best_s = 0, best_m = -xmin;
  uint8_t cand[32];
  for (int k = -10; k <= 10; ++k) {
    const float iscale = (float(nmax) + 0.1f * float(k)) / (xmax - xmin);
    float sl = 0, sl2 = 0, sx = 0, slx = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(nearest_int(iscale * (x[i] - xmin)), 0, nmax);
      cand[i] = uint8_t(l);
      sl += float(l), sl2 += float(l * l), sx += x[i], slx += float(l) * x[i];
    }
    const float det = float(n) * sl2 - sl * sl;
    if (!(sl2 > 0)) continue;
    float s = slx / sl2, off = 0;  // all levels equal (e.g. a positive constant): scale only
    if (det > 0) {
      s = (float(n) * slx - sl * sx) / det;
      off = (sl2 * sx - sl * slx) / det;
      if (off > 0) off = 0, s = slx / sl2;
    }
    if (!(s > 0)) continue;
    float err = 0;
    for (int i = 0; i < n; ++i) {
      const float diff = s * float(cand[i]) + off - x[i];
      err += diff * diff;
    }
    if (err < best_err) best_err = err, best_s = s, best_m = -off, std::copy(cand, cand + n, L);
  }
  m_out = best_m;
  return best_s;
}

// Symmetric fit of one Q6_K sub-block: x ~= s*q with q in [-32, 31] (s may be negative, so the extreme value can
// use the extra level -32). Scale search: with mx the value of largest magnitude, try iscale = +-(32 + 0.1k)/mx for
// k = -10..10, round and clamp q, take the least-squares s for that q, keep the smallest squared error.
float fit_symmetric(const float* x, int n, int8_t* q) {
  float amax = 0, mx = 0;
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > amax) amax = std::fabs(x[i]), mx = x[i];
  std::fill(q, q + n, int8_t(0));
  if (amax == 0) return 0;
  float best_gain = -1, best_s = 0;
  int8_t cand[16];
  for (int sign = -1; sign <= 1; sign += 2) {
    for (int k = -10; k <= 10; ++k) {
      const float iscale = float(sign) * (32.0f + 0.1f * float(k)) / mx;
      float sqx = 0, sq2 = 0;
      for (int i = 0; i < n; ++i) {
        const int l = std::clamp(nearest_int(iscale * x[i]), -32, 31);
        cand[i] = int8_t(l);
        sqx += float(l) * x[i], sq2 += float(l * l);
      }
      if (!(sq2 > 0)) continue;
      const float gain = sqx * sqx / sq2;  // squared error = sum x^2 - gain
      if (gain > best_gain) best_gain = gain, best_s = sqx / sq2, std::copy(cand, cand + n, q);
    }
  }
  return best_s;
}

void pack_scale_min_k4(int j, uint8_t ls, uint8_t lm, uint8_t* scales) {
  if (j < 4) {
    scales[j] |= ls;
    scales[j + 4] |= lm;
  } else {
    scales[j + 4] = uint8_t((ls & 0x0f) | ((lm & 0x0f) << 4));
    scales[j - 4] |= uint8_t((ls >> 4) << 6);
    scales[j] |= uint8_t((lm >> 4) << 6);
  }
}

// Q4_K / Q5_K: fit every sub-block of 32 (fit_affine), quantize the 8 scales and 8 mins to 6 bits against
// d = max scale/63 and dmin = max min/63 (the f16-rounded values), then re-round every value against the final
// per-sub-block (d*sc, dmin*m). A sub-block whose scale rounds to 0 keeps its mean (clamped to <= 0) as a constant.
// Writes d, dmin and scales[12]; returns the levels in L[256].
void quant_k_affine(const float* x, uint8_t* b, int nmax, uint8_t* L) {
  float s[8], m[8];
  for (int j = 0; j < 8; ++j) s[j] = fit_affine(x + 32 * j, 32, nmax, L + 32 * j, m[j]);
  const float smax = *std::max_element(s, s + 8), mmax = *std::max_element(m, m + 8);
  const uint16_t dh = fp32_to_fp16(smax / 63.0f), mh = fp32_to_fp16(mmax / 63.0f);
  const float d = fp16_to_fp32(dh), dmin = fp16_to_fp32(mh);
  auto q6 = [](float v, float unit) { return uint8_t(unit > 0 ? std::clamp(nearest_int(v / unit), 0, 63) : 0); };
  store_u16(b, dh);
  store_u16(b + 2, mh);
  uint8_t* scales = b + 4;
  std::memset(scales, 0, 12);
  for (int j = 0; j < 8; ++j) {
    const float* xj = x + 32 * j;
    const uint8_t ls = q6(s[j], d);
    uint8_t lm = q6(m[j], dmin);
    const float dd = d * float(ls);
    if (ls == 0) {
      float sum = 0;
      for (int i = 0; i < 32; ++i) sum += xj[i];
      lm = q6(std::max(0.0f, -sum / 32.0f), dmin);
    }
    const float dm = dmin * float(lm);
    for (int i = 0; i < 32; ++i)
      L[32 * j + i] = uint8_t(ls ? std::clamp(nearest_int((xj[i] + dm) / dd), 0, nmax) : 0);
    pack_scale_min_k4(j, ls, lm, scales);
  }
}

void quant_q4_k(const float* x, uint8_t* b) {
  uint8_t L[256];
  quant_k_affine(x, b, 15, L);
  uint8_t* qs = b + 16;
  for (int g = 0; g < 4; ++g)
    for (int l = 0; l < 32; ++l) qs[32 * g + l] = uint8_t(L[64 * g + l] | (L[64 * g + 32 + l] << 4));
}

void quant_q5_k(const float* x, uint8_t* b) {
  uint8_t L[256];
  quant_k_affine(x, b, 31, L);
  uint8_t* qh = b + 16;
  uint8_t* qs = b + 48;
  std::memset(qh, 0, 32);
  for (int g = 0; g < 4; ++g)
    for (int l = 0; l < 32; ++l) {
      const uint8_t a = L[64 * g + l], c = L[64 * g + 32 + l];
      qs[32 * g + l] = uint8_t((a & 0x0f) | ((c & 0x0f) << 4));
      qh[l] |= uint8_t(((a >> 4) << (2 * g)) | ((c >> 4) << (2 * g + 1)));
    }
}

// Q6_K: fit every sub-block of 16 (fit_symmetric), quantize the 16 scales to int8 against d = -s_max/128 where
// s_max is the sub-block scale of largest magnitude (so it maps to -128), then re-round every value against d*sc.
void quant_q6_k(const float* x, uint8_t* b) {
  int8_t q[256];
  float s[16];
  for (int j = 0; j < 16; ++j) s[j] = fit_symmetric(x + 16 * j, 16, q + 16 * j);
  float smax = 0;
  for (int j = 0; j < 16; ++j)
    if (std::fabs(s[j]) > std::fabs(smax)) smax = s[j];
  const uint16_t dh = fp32_to_fp16(-smax / 128.0f);
  const float d = fp16_to_fp32(dh);
  auto* sc = reinterpret_cast<int8_t*>(b + 192);
  uint8_t L[256];
  for (int j = 0; j < 16; ++j) {
    sc[j] = int8_t(d != 0 ? std::clamp(nearest_int(s[j] / d), -128, 127) : 0);
    const float dd = d * float(sc[j]);
    for (int i = 0; i < 16; ++i)
      L[16 * j + i] = uint8_t((dd != 0 ? std::clamp(nearest_int(x[16 * j + i] / dd), -32, 31) : 0) + 32);
  }
  uint8_t* ql = b;
  uint8_t* qh = b + 128;
  for (int h = 0; h < 2; ++h) {
    const uint8_t* Lh = L + 128 * h;
    for (int l = 0; l < 32; ++l) {
      ql[64 * h + l] = uint8_t((Lh[l] & 0x0f) | ((Lh[l + 64] & 0x0f) << 4));
      ql[64 * h + l + 32] = uint8_t((Lh[l + 32] & 0x0f) | ((Lh[l + 96] & 0x0f) << 4));
      qh[32 * h + l] =
          uint8_t((Lh[l] >> 4) | ((Lh[l + 32] >> 4) << 2) | ((Lh[l + 64] >> 4) << 4) | ((Lh[l + 96] >> 4) << 6));
    }
  }
  store_u16(b + 208, dh);
}

template <class F> void for_blocks(Type t, int64_t n, F&& f) {
  const int64_t bs = block_size(t);
  const size_t bytes = block_bytes(t);
  const int64_t nb = n / bs;
  for (int64_t i = 0; i < nb; ++i) f(i * bs, size_t(i) * bytes);
}

}  // namespace

// ---- type table ----------------------------------------------------------------------------------------------------

bool is_known_type(uint32_t id) { return id < kMaxId && kTable[id].name != nullptr; }

Type type_from_id(uint32_t id) {
  if (!is_known_type(id)) throw Error(fmt::format("hl::quant: unknown ggml type id {}", id));
  return static_cast<Type>(id);
}

bool is_supported(Type t) { return is_known_type(static_cast<uint32_t>(t)) && kTable[uint32_t(t)].supported; }

const char* type_name(Type t) {
  const auto id = static_cast<uint32_t>(t);
  return is_known_type(id) ? kTable[id].name : "unknown";
}

Type type_from_name(std::string_view name) {
  auto lower = [](std::string_view s) {
    std::string r(s);
    for (auto& c : r) c = char(std::tolower(static_cast<unsigned char>(c)));
    return r;
  };
  const std::string want = lower(name);
  for (uint32_t id = 0; id < kMaxId; ++id)
    if (kTable[id].name && lower(kTable[id].name) == want) return static_cast<Type>(id);
  throw Error(fmt::format("hl::quant: unknown type name {}", printable(name)));
}

int64_t block_size(Type t) { return traits(t).blck; }
size_t block_bytes(Type t) { return traits(t).bytes; }

size_t row_bytes(Type t, int64_t n) {
  const auto& tr = traits(t);
  if (n < 0 || n % tr.blck != 0)
    throw Error(fmt::format("hl::quant: row of {} values is not a multiple of the {} block size {}", n, tr.name,
                            tr.blck));
  return size_t(n / tr.blck) * tr.bytes;
}

// ---- rows --------------------------------------------------------------------------------------------------------

void dequantize_row(Type t, const void* src, float* dst, int64_t n) {
  require_supported(t, "dequantize_row");
  row_bytes(t, n);  // validates n
  const auto* s = static_cast<const uint8_t*>(src);
  switch (t) {
    case Type::F32: std::memcpy(dst, src, size_t(n) * 4); break;
    case Type::F16:
      for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(load_u16(s + 2 * i));
      break;
    case Type::BF16:
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(load_u16(s + 2 * i));
      break;
    case Type::Q8_0: for_blocks(t, n, [&](int64_t v, size_t o) { dequant_q8_0(s + o, dst + v); }); break;
    case Type::Q4_K: for_blocks(t, n, [&](int64_t v, size_t o) { dequant_k_affine<false>(s + o, dst + v); }); break;
    case Type::Q5_K: for_blocks(t, n, [&](int64_t v, size_t o) { dequant_k_affine<true>(s + o, dst + v); }); break;
    case Type::Q6_K: for_blocks(t, n, [&](int64_t v, size_t o) { dequant_q6_k(s + o, dst + v); }); break;
    default: break;  // unreachable: require_supported
  }
}

void quantize_row(Type t, const float* src, void* dst, int64_t n) {
  require_supported(t, "quantize_row");
  row_bytes(t, n);
  if (block_size(t) > 1)  // the scale searches need finite input (f32/f16/bf16 carry inf and NaN through)
    for (int64_t i = 0; i < n; ++i)
      if (!std::isfinite(src[i]))
        throw Error(fmt::format("hl::quant: quantize_row {}: non-finite value {} at index {}", type_name(t), src[i], i));
  auto* d = static_cast<uint8_t*>(dst);
  switch (t) {
    case Type::F32: std::memcpy(dst, src, size_t(n) * 4); break;
    case Type::F16:
      for (int64_t i = 0; i < n; ++i) store_u16(d + 2 * i, fp32_to_fp16(src[i]));
      break;
    case Type::BF16:
      for (int64_t i = 0; i < n; ++i) store_u16(d + 2 * i, fp32_to_bf16(src[i]));
      break;
    case Type::Q8_0: for_blocks(t, n, [&](int64_t v, size_t o) { quant_q8_0(src + v, d + o); }); break;
    case Type::Q4_K: for_blocks(t, n, [&](int64_t v, size_t o) { quant_q4_k(src + v, d + o); }); break;
    case Type::Q5_K: for_blocks(t, n, [&](int64_t v, size_t o) { quant_q5_k(src + v, d + o); }); break;
    case Type::Q6_K: for_blocks(t, n, [&](int64_t v, size_t o) { quant_q6_k(src + v, d + o); }); break;
    default: break;
  }
}

// ---- planar rows ---------------------------------------------------------------------------------------------

std::vector<size_t> planar_fields(Type t) {
  switch (t) {
    case Type::Q8_0: return {2, 32};                // d, qs
    case Type::Q4_K: return {4, 12, 128};           // d and dmin, scales, qs
    case Type::Q5_K: return {4, 12, 32, 128};       // d and dmin, scales, qh, qs
    case Type::Q6_K: return {128, 64, 16, 2};       // ql, qh, scales, d
    default:
      throw Error(fmt::format("hl::quant: planar rows are defined for q8_0, q4_K, q5_K and q6_K blocks, not {}",
                              type_name(t)));
  }
}

void planar_row(Type t, const void* src, void* dst, int64_t n) {
  const std::vector<size_t> fields = planar_fields(t);
  const size_t nb = row_bytes(t, n) / block_bytes(t), bytes = block_bytes(t);
  const auto* s = static_cast<const uint8_t*>(src);
  auto* d = static_cast<uint8_t*>(dst);
  size_t at = 0;  // the field's offset within a block
  for (size_t f : fields) {
    for (size_t b = 0; b < nb; ++b, d += f) std::memcpy(d, s + b * bytes + at, f);
    at += f;
  }
}

}  // namespace hl::quant
