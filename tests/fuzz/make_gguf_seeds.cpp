// Writes the GGUF seeds of tests/fuzz/corpus/gguf/ with the quant library's Writer:
//   cmake --build build --target fuzz_make_gguf_seeds && build/tests/fuzz/fuzz_make_gguf_seeds tests/fuzz/corpus/gguf
// Small files (under 2 KB each) that still reach every part of the reader: each metadata value type, nested
// arrays, a non-default alignment, and a tensor of every supported storage type plus a known-but-unsupported one.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "quant/gguf.h"

using namespace hl::quant;

namespace {

std::vector<uint8_t> quantized(Type t, int64_t ne0, int64_t rows) {
  std::vector<float> x(size_t(ne0 * rows));
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * float(i)) * (1.0f + float(i % 7));
  std::vector<uint8_t> b(row_bytes(t, ne0) * size_t(rows));
  for (int64_t r = 0; r < rows; ++r) quantize_row(t, x.data() + r * ne0, b.data() + size_t(r) * row_bytes(t, ne0), ne0);
  return b;
}

void save(const Writer& w, const std::string& path) {
  w.write(path);
  std::printf("%s: %llu bytes\n", path.c_str(), (unsigned long long)w.file_size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];

  Writer meta;  // every metadata type, no tensors
  meta.set("general.architecture", "qwen35moe");
  meta.set("u8", uint8_t(7));
  meta.set("i8", int8_t(-7));
  meta.set("u16", uint16_t(700));
  meta.set("i16", int16_t(-700));
  meta.set("u32", uint32_t(70000));
  meta.set("i32", int32_t(-70000));
  meta.set("f32", 0.5f);
  meta.set("bool", true);
  meta.set("str", "tok\xc4\xa0");
  meta.set("u64", uint64_t(1) << 40);
  meta.set("i64", -(int64_t(1) << 40));
  meta.set("f64", 1e-300);
  meta.set("arr", Value::array_of(std::vector<std::string>{"<|im_start|>", "", "a"}));
  meta.set("nested", Value::array(ValueType::ARRAY, {Value::array_of(std::vector<int32_t>{1, 2}),
                                                     Value::array_of(std::vector<float>{1.5f})}));
  save(meta, dir + "/metadata.gguf");

  const std::vector<uint8_t> f32 = quantized(Type::F32, 8, 2), f16 = quantized(Type::F16, 4, 1),
                             bf16 = quantized(Type::BF16, 4, 1), q8 = quantized(Type::Q8_0, 32, 2),
                             q4k = quantized(Type::Q4_K, 256, 1), q6k = quantized(Type::Q6_K, 256, 1),
                             q5k = quantized(Type::Q5_K, 256, 1), q40(18, 0x11);
  Writer small;  // the blocks a Qwen3.6 GGUF uses, one small tensor each
  small.set("general.architecture", "qwen35moe");
  small.set("qwen35moe.block_count", uint32_t(1));
  small.add_tensor("output_norm.weight", Type::F32, {8, 2}, f32.data(), f32.size());
  small.add_tensor("blk.0.f16", Type::F16, {4}, f16.data(), f16.size());
  small.add_tensor("blk.0.bf16", Type::BF16, {4}, bf16.data(), bf16.size());
  small.add_tensor("blk.0.q8_0", Type::Q8_0, {32, 2}, q8.data(), q8.size());
  small.add_tensor("blk.0.q4_K", Type::Q4_K, {256}, q4k.data(), q4k.size());
  small.add_tensor("empty", Type::F32, {0, 3}, nullptr, 0);
  save(small, dir + "/tensors.gguf");

  Writer k;  // K-quants with 3-d and 4-d shapes and a known-but-unsupported type, 64-byte alignment
  k.set("general.alignment", uint32_t(64));
  k.add_tensor("blk.0.q6_K", Type::Q6_K, {256, 1, 1}, q6k.data(), q6k.size());
  k.add_tensor("blk.0.q5_K", Type::Q5_K, {256, 1, 1, 1}, q5k.data(), q5k.size());
  k.add_tensor("blk.0.q4_0", Type::Q4_0, {32}, q40.data(), q40.size());
  save(k, dir + "/kquants_aligned.gguf");
  return 0;
}
