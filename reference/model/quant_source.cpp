#include "model/quant_source.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

namespace hl {

namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

namespace {

class QuantSource final : public TensorSource {
 public:
  QuantSource(std::string name, int64_t rows, int64_t cols, quant::Type t)
      : TensorSource(std::move(name), rows, cols), type_(t), row_bytes_(quant::row_bytes(t, cols)),
        raw_(size_t(rows) * row_bytes_) {}

  // Quantizes `n` rows of row-major floats into rows [r0, r0 + n).
  void fill(int64_t r0, int64_t n, const float* rows) {
#pragma omp parallel for schedule(static) if (n * cols() > (1 << 16))
    for (int64_t r = 0; r < n; ++r)
      quant::quantize_row(type_, rows + r * cols(), raw_.data() + size_t(r0 + r) * row_bytes_, cols());
  }

  void read_rows(int64_t r0, int64_t n, float* out) const override {
#pragma omp parallel for schedule(static) if (n * cols() > (1 << 16))
    for (int64_t r = 0; r < n; ++r)
      quant::dequantize_row(type_, raw_.data() + size_t(r0 + r) * row_bytes_, out + r * cols(), cols());
  }
  quant::Type storage_type() const override { return type_; }
  std::vector<uint8_t>& raw() { return raw_; }  // rows back to back, for filling directly
  void read_raw_rows(int64_t r0, int64_t n, void* out) const override {
    std::memcpy(out, raw_.data() + size_t(r0) * row_bytes_, size_t(n) * row_bytes_);
  }

 private:
  quant::Type type_;
  size_t row_bytes_;
  std::vector<uint8_t> raw_;
};

}  // namespace

std::shared_ptr<const TensorSource> quantized_source(std::string name, const Mat<float>& w, quant::Type t) {
  auto s = std::make_shared<QuantSource>(std::move(name), w.rows(), w.cols(), t);
  s->fill(0, w.rows(), w.data());
  return s;
}

std::shared_ptr<const TensorSource> quantized_source(std::string name, const TensorSource& src, quant::Type t) {
  auto s = std::make_shared<QuantSource>(std::move(name), src.rows(), src.cols(), t);
  const int64_t step = std::max<int64_t>(1, (int64_t(1) << 22) / std::max<int64_t>(1, src.cols()));  // ~16 MB of floats
  std::vector<float> buf(size_t(std::min(step, src.rows()) * src.cols()));
  for (int64_t r0 = 0; r0 < src.rows(); r0 += step) {
    const int64_t n = std::min(step, src.rows() - r0);
    src.read_rows(r0, n, buf.data());
    s->fill(r0, n, buf.data());
  }
  return s;
}

bool has_random_blocks(quant::Type t) {
  return t == quant::Type::Q8_0 || t == quant::Type::Q4_K || t == quant::Type::Q5_K || t == quant::Type::Q6_K;
}

void random_blocks(quant::Type t, uint8_t* raw, uint64_t first, uint64_t count, uint64_t seed, float std) {
  // Where each block's f16 scales sit and the value spread per unit of d (uniform q, scales and mins; the
  // K-quant affine types get dmin = mean(sc * q) / mean(m) * d, which centres the values):
  //   q8_0 d*q, q in [-128, 128): 74 d;  q4_K d*sc*q - dmin*m, q < 16, sc, m < 64: 273 d, dmin = 7.5 d;
  //   q5_K q < 32: 530 d, dmin = 15.5 d;  q6_K d*sc*(q - 32), sc in [-128, 128): 1365 d.
  struct Fields {
    size_t d, dmin;  // byte offsets (dmin: 0 = none)
    float spread, dmin_ratio;
  };
  Fields f;
  switch (t) {
    case quant::Type::Q8_0: f = {0, 0, 74.f, 0.f}; break;
    case quant::Type::Q4_K: f = {0, 2, 273.f, 7.5f}; break;
    case quant::Type::Q5_K: f = {0, 2, 530.f, 15.5f}; break;
    case quant::Type::Q6_K: f = {208, 0, 1365.f, 0.f}; break;
    default: fail("random blocks of type {}: only q8_0, q4_K, q5_K and q6_K", quant::type_name(t));
  }
  const size_t bb = quant::block_bytes(t);
  const uint16_t d = quant::fp32_to_fp16(std / f.spread), dmin = quant::fp32_to_fp16(std / f.spread * f.dmin_ratio);
  const uint64_t key = splitmix64(seed);
#pragma omp parallel for schedule(static) if (count > 4096)
  for (int64_t i = 0; i < int64_t(count); ++i) {
    uint8_t* p = raw + size_t(i) * bb;
    const uint64_t b = first + uint64_t(i);
    for (size_t j = 0; j < bb; j += 8) {  // counter-based: word j / 8 of block b
      const uint64_t r = splitmix64(key + (b * 32 + j / 8) * 0x9e3779b97f4a7c15ull);
      std::memcpy(p + j, &r, std::min<size_t>(8, bb - j));
    }
    std::memcpy(p + f.d, &d, 2);
    if (f.dmin) std::memcpy(p + f.dmin, &dmin, 2);
  }
}

std::shared_ptr<const TensorSource> random_quantized_source(std::string name, int64_t rows, int64_t cols, quant::Type t,
                                                            uint64_t seed, float std) {
  if (!has_random_blocks(t)) {
    const auto src = synthetic_source(name, rows, cols, seed, {SynthInit::Normal, 0.f, std});
    return quantized_source(std::move(name), *src, t);
  }
  auto s = std::make_shared<QuantSource>(std::move(name), rows, cols, t);
  random_blocks(t, s->raw().data(), 0, s->raw().size() / quant::block_bytes(t), seed, std);
  return s;
}

}  // namespace hl
