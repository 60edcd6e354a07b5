// Block formats: bit-exact dequantization of hand-built blocks (expected values derived here from the format
// definition, never from the library's dequantizer), half/bfloat16 conversions against the CPU's F16C unit, and
// quantizer round-trip errors.
#include <catch2/catch.hpp>
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "quant/blocks.h"

using namespace hl::quant;

namespace {

using Bytes = std::vector<uint8_t>;

void put_u16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v & 0xff);
  p[1] = uint8_t(v >> 8);
}

bool same_bits(float a, float b) { return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b); }

// Every output value must match bit for bit; report the first mismatch.
void require_bits(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (!same_bits(got[i], want[i])) {
      INFO("value " << i << ": got " << got[i] << " want " << want[i]);
      REQUIRE(same_bits(got[i], want[i]));
    }
  }
}

std::vector<float> dequant(Type t, const Bytes& b, int64_t n) {
  REQUIRE(b.size() == row_bytes(t, n));
  std::vector<float> y(size_t(n), -12345.0f);
  dequantize_row(t, b.data(), y.data(), n);
  return y;
}

// The 6-bit scales and mins of a Q4_K/Q5_K super-block, packed into 12 bytes per the format definition:
// bytes 0-3 low 6 bits = sc[0..3], bytes 4-7 low 6 bits = m[0..3]; bytes 8-11 = sc[4..7] & 15 | (m[4..7] & 15) << 4;
// the top 2 bits of bytes 0-3 hold sc[4..7] >> 4, of bytes 4-7 hold m[4..7] >> 4.
std::array<uint8_t, 12> pack_k4(const int sc[8], const int m[8]) {
  std::array<uint8_t, 12> s{};
  for (int j = 0; j < 4; ++j) {
    s[j] = uint8_t(sc[j] | ((sc[j + 4] >> 4) << 6));
    s[j + 4] = uint8_t(m[j] | ((m[j + 4] >> 4) << 6));
    s[j + 8] = uint8_t((sc[j + 4] & 15) | ((m[j + 4] & 15) << 4));
  }
  return s;
}

// Sub-block scales/mins with every 6-bit value class: 63, 0-high-bit, values >= 16 (high bits 1, 2, 3).
const int kSc[8] = {1, 63, 17, 42, 5, 48, 33, 60};
const int kMn[8] = {63, 2, 50, 7, 31, 16, 59, 36};
// The same packing worked out by hand (see the comment of pack_k4).
const std::array<uint8_t, 12> kScalesLiteral = {0x01, 0xff, 0x91, 0xea, 0x7f, 0x42, 0xf2, 0x87, 0xf5, 0x00, 0xb1, 0x4c};

// Q4_K/Q5_K value v (0..255) lives in sub-block v/32; its low nibble is byte 32*(v/64) + v%32 of qs, the low nibble
// for the first 32 of each 64 and the high nibble for the second 32; Q5_K's 5th bit is bit (v/32) of qh[v%32].
void put_k4_level(uint8_t* qs, uint8_t* qh, int v, int q) {
  const int byte = 32 * (v / 64) + v % 32;
  qs[byte] |= uint8_t((q & 15) << ((v / 32) % 2 == 0 ? 0 : 4));
  if (qh) qh[v % 32] |= uint8_t(((q >> 4) & 1) << (v / 32));
}

// Q6_K value v: half h = v/128, r = v%128, quarter k = r/32, l = r%32. Low nibble: ql[64h + l + 32*(k%2)], low
// nibble for k < 2 and high nibble for k >= 2; high 2 bits: bits 2k..2k+1 of qh[32h + l]; scale: scales[v/16].
void put_q6_level(uint8_t* ql, uint8_t* qh, int v, int q_unsigned) {
  const int h = v / 128, r = v % 128, k = r / 32, l = r % 32;
  ql[64 * h + l + 32 * (k % 2)] |= uint8_t((q_unsigned & 15) << (k < 2 ? 0 : 4));
  qh[32 * h + l] |= uint8_t((q_unsigned >> 4) << (2 * k));
}

uint16_t f16_bits(float x) { return _cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT); }  // hardware F16C, exact inputs only
float f16_value(uint16_t h) { return _cvtsh_ss(h); }

}  // namespace

TEST_CASE("quant: type table follows ggml", "[quant]") {
  CHECK(static_cast<uint32_t>(Type::Q8_0) == 8);
  CHECK(static_cast<uint32_t>(Type::Q4_K) == 12);
  CHECK(static_cast<uint32_t>(Type::BF16) == 30);
  CHECK(std::string(type_name(Type::Q4_K)) == "q4_K");
  CHECK(std::string(type_name(Type::Q8_0)) == "q8_0");
  CHECK(std::string(type_name(Type::BF16)) == "bf16");
  CHECK(type_from_name("q6_K") == Type::Q6_K);
  CHECK(type_from_name("Q5_K") == Type::Q5_K);
  CHECK(type_from_name("F16") == Type::F16);
  CHECK_THROWS_WITH(type_from_name("q7_K"), Catch::Contains("unknown type name 'q7_K'"));
  CHECK(block_size(Type::F32) == 1);
  CHECK(block_size(Type::Q8_0) == 32);
  CHECK(block_size(Type::Q6_K) == 256);
  CHECK(block_bytes(Type::Q8_0) == 34);
  CHECK(block_bytes(Type::Q4_K) == 144);
  CHECK(block_bytes(Type::Q5_K) == 176);
  CHECK(block_bytes(Type::Q6_K) == 210);
  CHECK(block_bytes(Type::F16) == 2);
  CHECK(row_bytes(Type::Q4_K, 2048) == 8 * 144);
  CHECK(row_bytes(Type::F32, 3) == 12);
  CHECK_THROWS_WITH(row_bytes(Type::Q4_K, 100), Catch::Contains("not a multiple of the q4_K block size 256"));
  CHECK_THROWS_AS(row_bytes(Type::Q8_0, -32), Error);
  CHECK(is_known_type(2));
  CHECK_FALSE(is_known_type(4));
  CHECK_FALSE(is_known_type(31));
  CHECK_THROWS_WITH(type_from_id(99), Catch::Contains("unknown ggml type id 99"));
  CHECK(is_supported(Type::Q6_K));
  CHECK_FALSE(is_supported(Type::Q4_0));
  float y[32];
  uint8_t buf[64] = {};
  CHECK_THROWS_WITH(dequantize_row(Type::Q4_0, buf, y, 32), Catch::Contains("unsupported type q4_0"));
  CHECK_THROWS_WITH(quantize_row(Type::IQ2_XXS, y, buf, 256), Catch::Contains("unsupported type iq2_xxs"));
}

TEST_CASE("quant: f16 decode: hand values and all 65536 codes against F16C", "[quant]") {
  CHECK(fp16_to_fp32(0x3c00) == 1.0f);
  CHECK(fp16_to_fp32(0xc000) == -2.0f);
  CHECK(fp16_to_fp32(0x7bff) == 65504.0f);
  CHECK(fp16_to_fp32(0x0400) == 0x1p-14f);          // smallest normal
  CHECK(fp16_to_fp32(0x0001) == 0x1p-24f);          // smallest subnormal
  CHECK(fp16_to_fp32(0x03ff) == 1023 * 0x1p-24f);   // largest subnormal
  CHECK(fp16_to_fp32(0x8001) == -0x1p-24f);
  CHECK(fp16_to_fp32(0x3555) == 0.333251953125f);
  CHECK(std::isinf(fp16_to_fp32(0x7c00)));
  CHECK(fp16_to_fp32(0xfc00) == -INFINITY);
  CHECK(same_bits(fp16_to_fp32(0x0000), 0.0f));
  CHECK(same_bits(fp16_to_fp32(0x8000), -0.0f));
  CHECK(std::isnan(fp16_to_fp32(0x7e00)));
  CHECK(std::isnan(fp16_to_fp32(0x7c01)));
  CHECK(std::isnan(fp16_to_fp32(0xfe00)));
  for (uint32_t h = 0; h < 65536; ++h) {
    const float mine = fp16_to_fp32(uint16_t(h)), hw = f16_value(uint16_t(h));
    if (std::isnan(hw)) {
      REQUIRE(std::isnan(mine));
      REQUIRE(std::signbit(mine) == std::signbit(hw));
    } else if (!same_bits(mine, hw)) {
      INFO("h = " << h);
      REQUIRE(same_bits(mine, hw));
    }
  }
  // F16 rows
  std::vector<uint16_t> codes = {0x3c00, 0x0001, 0x8000, 0x7c00, 0xfbff, 0x3555};
  Bytes b(codes.size() * 2);
  for (size_t i = 0; i < codes.size(); ++i) put_u16(b.data() + 2 * i, codes[i]);
  require_bits(dequant(Type::F16, b, int64_t(codes.size())), {1.0f, 0x1p-24f, -0.0f, INFINITY, -65504.0f, 0.333251953125f});
}

TEST_CASE("quant: f16 encode rounds to nearest even, subnormals included", "[quant]") {
  CHECK(fp32_to_fp16(1.0f) == 0x3c00);
  CHECK(fp32_to_fp16(-2.0f) == 0xc000);
  CHECK(fp32_to_fp16(65504.0f) == 0x7bff);
  CHECK(fp32_to_fp16(65519.0f) == 0x7bff);
  CHECK(fp32_to_fp16(65520.0f) == 0x7c00);            // tie above the max rounds to even = inf
  CHECK(fp32_to_fp16(1e30f) == 0x7c00);
  CHECK(fp32_to_fp16(-INFINITY) == 0xfc00);
  CHECK(fp32_to_fp16(-0.0f) == 0x8000);
  CHECK(fp32_to_fp16(1e-8f) == 0x0000);
  CHECK(fp32_to_fp16(0x1p-25f) == 0x0000);            // tie between 0 and 2^-24 -> even (0)
  CHECK(fp32_to_fp16(0x1.000002p-25f) == 0x0001);
  CHECK(fp32_to_fp16(3 * 0x1p-25f) == 0x0002);        // tie between 1 and 2 ulps -> even (2)
  CHECK(fp32_to_fp16(5 * 0x1p-25f) == 0x0002);        // tie between 2 and 3 -> 2
  CHECK(fp32_to_fp16(1023.5f * 0x1p-24f) == 0x0400);  // tie at the subnormal top -> carries into the exponent
  CHECK(fp32_to_fp16(1.0f + 0x1p-11f) == 0x3c00);     // tie -> even
  CHECK(fp32_to_fp16(1.0f + 3 * 0x1p-11f) == 0x3c02); // tie -> even (up)
  CHECK(fp32_to_fp16(0x1.ff8p-15f) == 0x03ff);        // largest subnormal (1023 * 2^-24), exact
  const uint16_t qnan = fp32_to_fp16(NAN);
  CHECK((qnan & 0x7c00) == 0x7c00);
  CHECK((qnan & 0x03ff) != 0);
  CHECK(std::isnan(fp16_to_fp32(fp32_to_fp16(std::bit_cast<float>(0x7f800001u)))));  // signalling payload lost

  // Every finite half round-trips; the midpoints between neighbours and one float ulp either side agree with F16C.
  for (uint32_t h = 0; h < 65536; ++h) {
    if ((h & 0x7c00) == 0x7c00) continue;
    const float x = fp16_to_fp32(uint16_t(h));
    REQUIRE(fp32_to_fp16(x) == h);
    if ((h & 0x7fff) == 0x7bff) continue;
    const float next = fp16_to_fp32(uint16_t(h + 1));
    const float mid = 0.5f * (x + next);  // exact: one more mantissa bit than half has
    for (float probe : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 2 * next)}) {
      if (fp32_to_fp16(probe) != f16_bits(probe)) {
        INFO("probe " << probe << " (bits " << std::bit_cast<uint32_t>(probe) << ")");
        REQUIRE(fp32_to_fp16(probe) == f16_bits(probe));
      }
    }
  }
  // A sweep over float bit patterns (all exponents, NaN excluded) against F16C.
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 4093) {
    const float x = std::bit_cast<float>(uint32_t(u));
    if (std::isnan(x)) continue;
    if (fp32_to_fp16(x) != f16_bits(x)) {
      INFO("bits " << u);
      REQUIRE(fp32_to_fp16(x) == f16_bits(x));
    }
  }
  // F16 rows: quantize_row rounds each value.
  const std::vector<float> x = {1.0f, 65520.0f, 0x1p-25f, 3 * 0x1p-25f, -0.0f};
  Bytes b(x.size() * 2);
  quantize_row(Type::F16, x.data(), b.data(), int64_t(x.size()));
  CHECK(b == Bytes{0x00, 0x3c, 0x00, 0x7c, 0x00, 0x00, 0x02, 0x00, 0x00, 0x80});
}

TEST_CASE("quant: bf16 is the upper half of f32, rounded to nearest even", "[quant]") {
  CHECK(bf16_to_fp32(0x3f80) == 1.0f);
  CHECK(bf16_to_fp32(0xc000) == -2.0f);
  CHECK(bf16_to_fp32(0x7f80) == INFINITY);
  CHECK(bf16_to_fp32(0x0001) == std::bit_cast<float>(0x00010000u));  // subnormal
  CHECK(std::isnan(bf16_to_fp32(0x7fc0)));
  CHECK(fp32_to_bf16(1.0f) == 0x3f80);
  CHECK(fp32_to_bf16(std::bit_cast<float>(0x3f808000u)) == 0x3f80);  // tie, even stays
  CHECK(fp32_to_bf16(std::bit_cast<float>(0x3f818000u)) == 0x3f82);  // tie, odd rounds up
  CHECK(fp32_to_bf16(std::bit_cast<float>(0x3f808001u)) == 0x3f81);
  CHECK(fp32_to_bf16(std::bit_cast<float>(0x3f807fffu)) == 0x3f80);
  CHECK(fp32_to_bf16(std::bit_cast<float>(0x7f7fffffu)) == 0x7f80);  // max float rounds to inf
  CHECK(fp32_to_bf16(-0.0f) == 0x8000);
  CHECK(fp32_to_bf16(std::bit_cast<float>(0x7f800001u)) == 0x7fc0);  // NaN stays NaN (quiet)
  CHECK(fp32_to_bf16(std::bit_cast<float>(0xff810000u)) == 0xffc1);
  const std::vector<float> x = {1.0f, std::bit_cast<float>(0x3f818000u), -3.5f};
  Bytes b(6);
  quantize_row(Type::BF16, x.data(), b.data(), 3);
  CHECK(b == Bytes{0x80, 0x3f, 0x82, 0x3f, 0x60, 0xc0});
  require_bits(dequant(Type::BF16, b, 3), {1.0f, std::bit_cast<float>(0x3f820000u), -3.5f});
}

TEST_CASE("quant: q8_0 dequantization of hand-built blocks", "[quant]") {
  // Block 0: d = 0.25 (0x3400) and every int8 extreme; block 1: d = -2^-24 (0x8001, subnormal) ; block 2: d = 0.
  Bytes b(3 * 34, 0);
  put_u16(&b[0], 0x3400);
  put_u16(&b[34], 0x8001);
  put_u16(&b[68], 0x3555);  // 0.333251953125: products round
  std::vector<float> want;
  for (int blk = 0; blk < 3; ++blk) {
    const float d = blk == 0 ? 0.25f : blk == 1 ? -0x1p-24f : 0.333251953125f;
    for (int j = 0; j < 32; ++j) {
      const int q = j == 0 ? -128 : j == 1 ? 127 : (j * 37 + blk * 11) % 256 - 128;
      b[size_t(34 * blk + 2 + j)] = uint8_t(int8_t(q));
      want.push_back(float(q) * d);  // ggml: q*d in float
    }
  }
  require_bits(dequant(Type::Q8_0, b, 96), want);
  CHECK(want[0] == -32.0f);
  CHECK(want[1] == 31.75f);
}

TEST_CASE("quant: q4_K and q5_K scale/min packing and dequantization of hand-built blocks", "[quant]") {
  const auto packed = pack_k4(kSc, kMn);
  REQUIRE(packed == kScalesLiteral);

  for (Type t : {Type::Q4_K, Type::Q5_K}) {
    const bool five = t == Type::Q5_K;
    const int nmax = five ? 31 : 15;
    // Block 0: d = 0.5, dmin = 0.125, every value exact. Block 1: awkward d/dmin (rounding in float).
    Bytes b(2 * block_bytes(t), 0);
    std::vector<float> want;
    for (int blk = 0; blk < 2; ++blk) {
      uint8_t* base = b.data() + blk * block_bytes(t);
      const uint16_t dh = blk == 0 ? 0x3800 : 0x3555, mh = blk == 0 ? 0x3000 : 0x2e66;
      put_u16(base, dh);
      put_u16(base + 2, mh);
      std::memcpy(base + 4, packed.data(), 12);
      uint8_t* qh = five ? base + 16 : nullptr;
      uint8_t* qs = five ? base + 48 : base + 16;
      const float d = f16_value(dh), dmin = f16_value(mh);
      for (int v = 0; v < 256; ++v) {
        const int j = v / 32, i = v % 32;
        // (7i + 5j + blk) mod (nmax+1) is a permutation of all levels within each sub-block (7 is odd).
        const int q = (7 * i + 5 * j + blk) % (nmax + 1);
        put_k4_level(qs, qh, v, q);
        const float d1 = d * float(kSc[j]), m1 = dmin * float(kMn[j]);  // ggml's order: (d*sc)*q - dmin*m
        want.push_back(d1 * float(q) - m1);
      }
    }
    if (five) {  // qh exercised on and off in every bit position
      for (int bit = 0; bit < 8; ++bit) {
        int on = 0;
        for (int l = 0; l < 32; ++l) on += (b[size_t(16 + l)] >> bit) & 1;
        CHECK(on > 0);
        CHECK(on < 32);
      }
    }
    INFO(type_name(t));
    const auto got = dequant(t, b, 512);
    require_bits(got, want);
    // spot checks on block 0 by hand: v=0 (j=0, q=0): -dmin*63 = -7.875; v=32 (j=1, q=5): 0.5*63*5 - 0.125*2
    CHECK(got[0] == -7.875f);
    CHECK(got[32] == 157.25f);
  }
}

TEST_CASE("quant: q6_K dequantization of hand-built blocks", "[quant]") {
  const int8_t sc[16] = {-128, 127, -77, 64, -1, 1, 33, -33, 100, -100, 5, -5, 2, 99, -64, 17};
  Bytes b(2 * 210, 0);
  std::vector<float> want;
  for (int blk = 0; blk < 2; ++blk) {
    uint8_t* base = b.data() + blk * 210;
    const uint16_t dh = blk == 0 ? 0x3400 : 0xb555;  // 0.25, then -0.333... (rounding)
    std::memcpy(base + 192, sc, 16);
    put_u16(base + 208, dh);
    const float d = f16_value(dh);
    for (int v = 0; v < 256; ++v) {
      const int qu = (v * 11 + 7 * blk) % 64;  // 11 is odd: all 64 levels in every 64 consecutive values
      put_q6_level(base, base + 128, v, qu);
      want.push_back(d * float(sc[v / 16]) * float(qu - 32));  // ggml: d * sc * q, left to right
    }
  }
  // all four 2-bit planes of qh take every value
  for (int k = 0; k < 4; ++k) {
    int seen[4] = {};
    for (int l = 0; l < 64; ++l) seen[(b[size_t(128 + l)] >> (2 * k)) & 3] = 1;
    CHECK(seen[0] + seen[1] + seen[2] + seen[3] == 4);
  }
  const auto got = dequant(Type::Q6_K, b, 512);
  require_bits(got, want);
  CHECK(got[0] == 0.25f * -128 * (0 - 32));  // v = 0: sc = -128, level 0 -> q = -32
}

TEST_CASE("quant: k-quant dequantization of random blocks matches a per-value reference decoder", "[quant]") {
  // Random bytes (with finite f16 scales) decoded value by value straight from the format definition.
  std::mt19937 rng(7);
  auto finite_f16 = [&] {
    uint16_t h;
    do h = uint16_t(rng()); while ((h & 0x7c00) == 0x7c00);
    return h;
  };
  const int nb = 16;
  for (Type t : {Type::Q8_0, Type::Q4_K, Type::Q5_K, Type::Q6_K}) {
    const int64_t n = nb * block_size(t);
    Bytes b(row_bytes(t, n));
    for (auto& x : b) x = uint8_t(rng());
    std::vector<float> want;
    for (int blk = 0; blk < nb; ++blk) {
      uint8_t* p = b.data() + blk * block_bytes(t);
      if (t == Type::Q8_0) {
        put_u16(p, finite_f16());
        for (int v = 0; v < 32; ++v) want.push_back(float(int8_t(p[2 + v])) * f16_value(uint16_t(p[0] | p[1] << 8)));
      } else if (t == Type::Q6_K) {
        put_u16(p + 208, finite_f16());
        const float d = f16_value(uint16_t(p[208] | p[209] << 8));
        for (int v = 0; v < 256; ++v) {
          const int h = v / 128, r = v % 128, k = r / 32, l = r % 32;
          const int lo = (p[64 * h + l + 32 * (k % 2)] >> (k < 2 ? 0 : 4)) & 15;
          const int hi = (p[128 + 32 * h + l] >> (2 * k)) & 3;
          want.push_back(d * float(int8_t(p[192 + v / 16])) * float((lo | hi << 4) - 32));
        }
      } else {
        put_u16(p, finite_f16());
        put_u16(p + 2, finite_f16());
        const float d = f16_value(uint16_t(p[0] | p[1] << 8)), dmin = f16_value(uint16_t(p[2] | p[3] << 8));
        const bool five = t == Type::Q5_K;
        const uint8_t* s = p + 4;
        const uint8_t* qs = p + (five ? 48 : 16);
        for (int v = 0; v < 256; ++v) {
          const int j = v / 32;
          // 6-bit scale/min of sub-block j, read bit by bit from the layout described at pack_k4
          const int sc = j < 4 ? (s[j] & 63) : ((s[j + 4] & 15) | ((s[j - 4] >> 6) << 4));
          const int m = j < 4 ? (s[j + 4] & 63) : ((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
          int q = (qs[32 * (v / 64) + v % 32] >> ((v / 32) % 2 ? 4 : 0)) & 15;
          if (five) q |= ((p[16 + v % 32] >> j) & 1) << 4;
          want.push_back(d * float(sc) * float(q) - dmin * float(m));
        }
      }
    }
    INFO(type_name(t));
    require_bits(dequant(t, b, n), want);
  }
}

namespace {

std::vector<float> gaussian(size_t n, uint32_t seed, float sigma = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, sigma);
  std::vector<float> x(n);
  for (auto& v : x) v = nd(rng);
  return x;
}

double rel_rms(const std::vector<float>& a, const std::vector<float>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) num += (double(a[i]) - ref[i]) * (double(a[i]) - ref[i]), den += double(ref[i]) * ref[i];
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

std::vector<float> round_trip(Type t, const std::vector<float>& x, Bytes* q_out = nullptr) {
  const auto n = int64_t(x.size());
  Bytes q(row_bytes(t, n));
  quantize_row(t, x.data(), q.data(), n);
  std::vector<float> y(x.size());
  dequantize_row(t, q.data(), y.data(), n);
  if (q_out) *q_out = q;
  return y;
}

}  // namespace

TEST_CASE("quant: round-trip error on gaussian rows", "[quant]") {
  // Relative RMS error, n = 4096, worst of 8 seeds (sigma 1 and 0.02). Measured: f16 0.00021, bf16 0.00169,
  // q8_0 0.00540, q6_K 0.01759, q5_K 0.03671, q4_K 0.07234; bounds a little above. Re-quantizing a dequantized row
  // (error relative to that row), measured: 0 for all but q5_K (0.00250; a sub-block whose levels do not span the
  // full range is re-fitted on another grid).
  struct Case {
    Type t;
    double bound, requant_bound;
  };
  const Case cases[] = {{Type::F16, 2.5e-4, 0}, {Type::BF16, 2e-3, 0},     {Type::Q8_0, 0.006, 0},
                        {Type::Q6_K, 0.019, 0}, {Type::Q5_K, 0.039, 0.004}, {Type::Q4_K, 0.076, 0.004}};
  for (const auto& c : cases) {
    double worst = 0, worst_rq = 0;
    for (uint32_t seed = 1; seed <= 8; ++seed) {
      const auto x = gaussian(4096, seed, seed % 2 ? 1.0f : 0.02f);
      const auto y = round_trip(c.t, x);
      worst = std::max(worst, rel_rms(y, x));
      worst_rq = std::max(worst_rq, rel_rms(round_trip(c.t, y), y));
    }
    std::printf("quant round trip %-5s rel RMS %.5f   requantized %.5f\n", type_name(c.t), worst, worst_rq);
    INFO(type_name(c.t) << " rel RMS " << worst << " requantized " << worst_rq);
    CHECK(worst < c.bound);
    CHECK(worst_rq <= c.requant_bound);
  }
}

TEST_CASE("quant: special rows", "[quant]") {
  for (Type t : {Type::Q8_0, Type::Q4_K, Type::Q5_K, Type::Q6_K}) {
    INFO(type_name(t));
    // all zeros -> exact zeros
    std::vector<float> z(512, 0.0f);
    CHECK(round_trip(t, z) == z);
    // constants (positive and negative) are reproduced closely
    for (float c : {3.0f, -1.5f}) {
      const std::vector<float> x(512, c);
      CHECK(rel_rms(round_trip(t, x), x) < 2e-3);
    }
    // small values: f16 scales lose precision in their subnormal range but the result stays sensible, and values
    // too small for any f16 scale never come out worse than zeros
    const auto small = gaussian(512, 3, 1e-3f);
    CHECK(rel_rms(round_trip(t, small), small) < 0.1);
    const auto tiny = gaussian(512, 3, 1e-7f);
    const auto yt = round_trip(t, tiny);
    for (float v : yt) REQUIRE(std::isfinite(v));
    CHECK(rel_rms(yt, tiny) <= 1.0);
    // non-finite input is an error for block types
    auto bad = gaussian(512, 5);
    bad[300] = NAN;
    CHECK_THROWS_WITH(round_trip(t, bad), Catch::Contains("non-finite value nan at index 300"));
    bad[300] = -INFINITY;
    CHECK_THROWS_WITH(round_trip(t, bad), Catch::Contains("non-finite value -inf at index 300"));
    // outliers are kept
    auto outl = gaussian(512, 4);
    outl[17] = 100.0f;
    outl[300] = -80.0f;
    const auto y = round_trip(t, outl);
    CHECK(std::fabs(y[17] - 100.0f) < 2.0f);
    CHECK(std::fabs(y[300] + 80.0f) < 2.0f);
  }
}

TEST_CASE("quant: planar rows group each field of every block", "[quant]") {
  // Field offsets within a block, from the layouts in blocks.h (not from planar_fields).
  struct Case {
    Type t;
    std::vector<std::pair<size_t, size_t>> fields;  // (offset in the block, bytes)
  };
  const Case cases[] = {{Type::Q6_K, {{0, 128}, {128, 64}, {192, 16}, {208, 2}}},
                        {Type::Q4_K, {{0, 4}, {4, 12}, {16, 128}}},
                        {Type::Q5_K, {{0, 4}, {4, 12}, {16, 32}, {48, 128}}},
                        {Type::Q8_0, {{0, 2}, {2, 32}}}};
  for (const Case& c : cases) {
    const int64_t nb = 3, n = nb * block_size(c.t);
    const size_t bb = block_bytes(c.t);
    Bytes src(nb * bb), got(nb * bb, 0xEE);
    for (size_t i = 0; i < src.size(); ++i) src[i] = uint8_t(i * 7 + i / 251);  // no byte value repeats nearby
    planar_row(c.t, src.data(), got.data(), n);
    Bytes want;
    for (auto [off, len] : c.fields)
      for (int64_t b = 0; b < nb; ++b) want.insert(want.end(), src.begin() + b * bb + off, src.begin() + b * bb + off + len);
    REQUIRE(want.size() == src.size());
    CHECK(got == want);
  }
  CHECK_THROWS_WITH(planar_fields(Type::F32), Catch::Contains("not f32"));
}
