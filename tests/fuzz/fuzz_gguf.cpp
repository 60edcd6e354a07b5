// Fuzz target: the GGUF reader (hl::quant::Reader::from_bytes, reference/quant/gguf.cpp). Every tensor of an
// accepted file is touched whole and its first and last rows dequantized where the type is supported, and
// every metadata value is rendered, as a consumer would; its vocabulary is checked as load_gguf checks it
// (read_gguf_vocab, reference/model/gguf_vocab.cpp) against token_embd's rows.
#include <vector>

#include "common.h"
#include "fuzz_util.h"
#include "model/gguf_vocab.h"
#include "quant/gguf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hl::quant;
  hl::fuzz::expect_ok_or<Error>([&] {
    const Reader r = Reader::from_bytes(std::vector<uint8_t>(data, data + size), "fuzz.gguf");
    for (const auto& [key, value] : r.metadata().entries()) {
      (void)describe(value);
      if (r.metadata().find(key) == nullptr) hl::fuzz::finding("metadata key not found", key);
    }
    for (const TensorInfo& t : r.tensors()) {
      unsigned sum = 0;
      for (size_t i = 0; i < t.nbytes; ++i) sum += t.data[i];
      (void)sum;
      if (r.find_tensor(t.name) != &t) hl::fuzz::finding("tensor not found by name", t.name);
      if (t.nbytes == 0 || !is_supported(t.type)) continue;
      std::vector<float> row(size_t(t.ne[0]));
      dequantize_row(t.type, t.row(0), row.data(), t.ne[0]);
      dequantize_row(t.type, t.row(t.n_rows() - 1), row.data(), t.ne[0]);
    }
    // Metadata accessors throw quant::Error, the vocabulary's own checks hl::Error: both are the contract.
    const TensorInfo* embd = r.find_tensor("token_embd.weight");
    if (embd && embd->ne[1] >= 1 && embd->ne[1] <= (int64_t(1) << 31))
      hl::fuzz::expect_ok_or<hl::Error>([&] { (void)hl::read_gguf_vocab(r.metadata(), embd->ne[1]); });
  });
  return 0;
}
