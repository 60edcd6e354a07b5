// The tokenizer metadata of a qwen35moe GGUF file, written the way llama.cpp's converter writes a GPT-2-style
// byte-level BPE vocabulary (Qwen's): tokenizer.ggml.model "gpt2", .pre, .tokens (one per embedding row),
// .token_type, .merges, the special token ids and add_*_token flags, tokenizer.chat_template, and
// <arch>.vocab_size. llama.cpp refuses a file without tokenizer.ggml.model, and checks that the token list has
// exactly as many entries as token_embd has rows, with no string twice.
//
// From a checkpoint: tokenizer.json (model.vocab, model.merges, added_tokens, the pre-tokenizer's split regex),
// tokenizer_config.json (special tokens, add_bos_token, chat_template), chat_template.jinja and config.json's
// *_token_id, as convert_hf_to_gguf.py and gguf-py's SpecialVocab read them. Without a tokenizer.json (synthetic
// weights, the random test models): a placeholder of the same size (placeholder_vocab).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "quant/gguf.h"

namespace hl {

// llama.cpp's token types (llama_token_type; gguf-py's TokenType).
enum class TokenType : int32_t { Undefined = 0, Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6 };

struct GgufVocab {
  std::string model = "gpt2";        // tokenizer.ggml.model
  std::string pre;                   // tokenizer.ggml.pre: llama.cpp's pre-tokenizer name ("qwen2", "qwen35")
  std::vector<std::string> tokens;   // one per embedding row, all distinct
  std::vector<int32_t> types;        // TokenType per token
  std::vector<std::string> merges;   // "left right", highest priority first
  // ("bos", id) -> tokenizer.ggml.bos_token_id; kinds bos, eos, unk, sep, pad, mask (gguf-py's key names).
  std::vector<std::pair<std::string, uint32_t>> special_ids;
  std::vector<std::pair<std::string, bool>> add_special;  // ("bos", false) -> tokenizer.ggml.add_bos_token
  std::string chat_template;         // tokenizer.chat_template; empty: none
  std::string source;                // where it came from, for messages and `info`

  // Throws naming the first problem: a count that is not the embedding's, a repeated token, an id out of range.
  void check(int64_t n_vocab) const;
  // Writes the tokenizer.* keys and <arch>.vocab_size.
  void write(quant::Writer& out, const std::string& arch) const;
  std::string describe() const;  // "gpt2/qwen35, 248320 tokens, 247587 merges, eos 248046 (tokenizer.json of DIR)"
};

// A vocabulary of n_vocab tokens that llama.cpp loads: the 256 byte-level symbols of GPT-2's alphabet (in its
// order, which is also Qwen's ids 0-255; fewer if n_vocab is small), then "ĠĠ" (two spaces) with the one merge
// "Ġ Ġ" that makes it (if n_vocab >= 258; else no merges), "[PAD<i>]" rows of type UNUSED (what the converter
// writes for embedding rows no token names), and "<|endoftext|>" (CONTROL) as the last token, which is bos, eos
// and padding. Any text tokenizes (into bytes). tokenizer.ggml.pre "qwen2", add_bos_token false.
GgufVocab placeholder_vocab(int64_t n_vocab);

// The checkpoint's tokenizer, n_vocab tokens long, or nullopt when dir has no tokenizer.json. A tokenizer.json
// that is not a byte-level BPE with Qwen2's or Qwen3.5's split regex, ids outside [0, n_vocab), a repeated token
// or a malformed field: a one-line error naming the file.
std::optional<GgufVocab> hf_vocab(const std::string& dir, int64_t n_vocab);

// The vocabulary a GGUF file holds (tokenizer.ggml.*), or nullopt when it has none; checked against the file's
// embedding rows (n_vocab).
std::optional<GgufVocab> read_gguf_vocab(const quant::Metadata& m, int64_t n_vocab);

}  // namespace hl
