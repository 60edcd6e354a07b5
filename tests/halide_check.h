// Checking Halide variants (halide:<op>:<schedule> on the CPU, halide-vulkan:<op>:<schedule> through Halide's Vulkan
// runtime, on lavapipe in CI) against the reference: the shared part of every op's test_halide.cpp. Tolerances as the
// Vulkan variants': sums in another order than Eigen's.
#pragma once
#include <cstring>

#include "ops/halide/halide.h"
#include "quant/blocks.h"
#include "variant_check.h"

namespace hl::test {

using gpu::unit_heads;

// Every Halide variant of an op (both families).
inline std::vector<std::string> halide_variants(const std::string& op) {
  std::vector<std::string> v;
  for (auto* x : gpu::Registry::get().variants(op))
    if (x->family == "halide" || x->family == "halide-vulkan") v.push_back(x->name);
  return v;
}

// `vulkan` false: the CPU schedules only (shapes too slow for lavapipe).
inline void check_all(const std::string& op, const gpu::OpArgs& a, double tol, bool vulkan = true) {
  const auto vs = halide_variants(op);
  REQUIRE(vs.size() >= 2);  // plain and tuned at least
  for (auto& v : vs) {
    if (!vulkan && v.starts_with("halide-vulkan:")) continue;
    INFO(op << " " << v);
    require_close(op, v, a, tol);
  }
}

// A Q8_0 weight: ggml blocks as the raw rows, their exact dequantization as the values.
class Q8Source final : public TensorSource {
 public:
  Q8Source(std::string name, const Mat<float>& m)
      : TensorSource(std::move(name), m.rows(), m.cols()), rb_(quant::row_bytes(quant::Type::Q8_0, m.cols())),
        raw_(rb_ * size_t(m.rows())) {
    for (int64_t r = 0; r < m.rows(); ++r) quant::quantize_row(quant::Type::Q8_0, m.row(r).data(), raw_.data() + rb_ * r, m.cols());
  }
  void read_rows(int64_t r0, int64_t n, float* out) const override {
    for (int64_t r = 0; r < n; ++r) quant::dequantize_row(quant::Type::Q8_0, raw_.data() + rb_ * (r0 + r), out + r * cols(), cols());
  }
  quant::Type storage_type() const override { return quant::Type::Q8_0; }
  void read_raw_rows(int64_t r0, int64_t n, void* out) const override {
    std::memcpy(out, raw_.data() + rb_ * r0, rb_ * size_t(n));
  }

 private:
  size_t rb_;
  std::vector<uint8_t> raw_;
};

}  // namespace hl::test

// One test per op with Halide variants: every one of them against the reference on the op's cases.
#define HL_TEST_EVERY_HALIDE_VARIANT(op)                                                                     \
  TEST_CASE(op ": every Halide variant against the reference on its cases", "[halide][every]") {             \
    hl::test::check_every_variant(op, {"halide", "halide-vulkan"});                                          \
  }
