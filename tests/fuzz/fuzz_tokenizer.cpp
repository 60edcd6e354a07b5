// Fuzz target: the tokenizer reader `convert` runs on a checkpoint's tokenizer files (hf_vocab,
// reference/model/gguf_vocab.cpp). The input is tokenizer.json, then optionally a NUL byte and tokenizer_config.json
// (NUL cannot occur in JSON text); a fixed config.json sits beside them. An accepted vocabulary must be one a GGUF
// file can hold for an embedding of 512 rows: it is written to GGUF metadata and read back as load_gguf reads it.
#include <cstring>

#include "common.h"
#include "fuzz_util.h"
#include "model/gguf_vocab.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool config = [] {
    const char cfg[] = R"({"vocab_size": 512, "bos_token_id": 3, "eos_token_id": [1, 2], "text_config": {"pad_token_id": 7}})";
    hl::fuzz::write_scratch("config.json", reinterpret_cast<const uint8_t*>(cfg), sizeof cfg - 1);
    return true;
  }();
  (void)config;
  const auto* nul = static_cast<const uint8_t*>(std::memchr(data, 0, size));
  const size_t n_tok = nul ? size_t(nul - data) : size;
  hl::fuzz::write_scratch("tokenizer.json", data, n_tok);
  const std::string cfg_path = hl::fuzz::scratch_dir() + "/tokenizer_config.json";
  if (nul) hl::fuzz::write_scratch("tokenizer_config.json", nul + 1, size - n_tok - 1);
  else std::remove(cfg_path.c_str());
  hl::fuzz::expect_ok_or<hl::Error>([&] {
    const auto v = hl::hf_vocab(hl::fuzz::scratch_dir(), 512);
    if (!v) hl::fuzz::finding("no vocabulary", "tokenizer.json is there");
    hl::quant::Writer w;
    v->write(w, "qwen35moe");
    const auto back = hl::read_gguf_vocab(w.metadata(), 512);
    if (!back || back->tokens != v->tokens || back->types != v->types || back->merges != v->merges ||
        back->special_ids != v->special_ids)
      hl::fuzz::finding("the vocabulary does not survive GGUF metadata", v->describe());
  });
  return 0;
}
