// Writing qwen35moe GGUF files: llama.cpp's converter transforms (convert_hf_to_gguf, SPEC 8.2-8.3), applied in fp32,
// and the tensor types of `convert_hf_to_gguf --outtype f32|f16|q8_0` or `llama-quantize Q4_K_M` (SPEC 9; the rules
// are spelled out in gguf_convert.cpp).
// Any ModelWeights can be written (an HF checkpoint, synthetic weights, a loaded GGUF): each tensor holds the value
// the math uses (the WeightRef's transform applied: norms 1 + w, ssm_a = -exp(A_log)), with the value heads moved
// to GGUF's tiled order unless the weights are tiled already. The file is streamed tensor by tensor, a few MB of
// rows at a time, quantized in parallel (OpenMP), so a model of any size is written in bounded memory.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "model/gguf_model.h"
#include "model/gguf_vocab.h"

namespace hl {

enum class GgufQuant { F32, F16, Q8_0, Q4_K_M };
GgufQuant gguf_quant_from_name(const std::string& name);  // f32, f16, q8_0, q4_k_m (any case); else an error
const char* gguf_quant_name(GgufQuant q);

struct GgufWriteOptions {
  GgufQuant quant = GgufQuant::F32;
  std::string name = "model";                        // general.name
  int64_t context_length = 262144;                   // qwen35moe.context_length (max_position_embeddings)
  std::vector<int32_t> rope_sections{11, 11, 10, 0};  // qwen35moe.rope.dimension_sections (mrope_section)
  // Quantized tensors (q8_0 and K-quants) as random blocks (model/quant_source.h: values of about the source's
  // 1/sqrt(cols) spread) instead of the source's values quantized: a synthetic model written at disk speed, for
  // benchmarks, where quantizing 35 B values would take minutes. The f32 tensors (norms, router, gates) as usual.
  bool random_blocks = false;
  // The tokenizer metadata (gguf_vocab.h); absent: placeholder_vocab of the embedding's rows.
  std::optional<GgufVocab> vocab;
  // After each tensor: its layout entry, its type and the seconds it took.
  std::function<void(const GgufTensorDesc&, quant::Type, double)> on_tensor;
};

struct GgufWriteSummary {
  uint64_t bytes = 0;
  std::map<std::string, int> type_counts;  // ggml type name -> tensors
  double seconds = 0;
  std::string vocab;  // GgufVocab::describe() of what was written
  std::string describe() const;  // "1.23 GB, 733 tensors (481 f32, 120 q4_K, ...)"
};

GgufWriteSummary write_gguf(const ModelWeights& w, const std::string& path, const GgufWriteOptions& o);

// The options `hybridlab convert` writes an HF checkpoint directory with (write_gguf(load_hf(dir), ...)):
// general.name is the directory's name; context length and mrope sections come from its config.json; the vocabulary
// from its tokenizer files (hf_vocab, n_vocab tokens) when it has them.
GgufWriteOptions gguf_options_for_hf(const std::string& hf_dir, GgufQuant q, int64_t n_vocab);

// Synthetic weights for `hybridlab synth`: synthetic_weights' generator with scales chosen so that hidden states
// keep a steady RMS through all layers of a full-size model (see gguf_convert.cpp).
ModelWeights synth_gguf_weights(const ModelConfig& c, uint64_t seed);

}  // namespace hl
