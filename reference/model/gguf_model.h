// GGUF models of llama.cpp's arch `qwen35moe` (SPEC 8): the tensor layout, shared by the loader (here) and the
// writer (gguf_convert.h), and load_gguf, which maps a file's tensors onto the oracle's WeightRefs.
//
// A GGUF tensor holds the value the math uses: the converter folded every transform in (norm weights are 1 + w,
// ssm_a is -exp(A_log), conv1d is squeezed to [C, K], experts are stacked), so the loaded weights carry
// Transform::None. Value heads are in GGUF's tiled order (SPEC 8.3) and stay so: the model says
// v_heads_tiled = true and the oracle, the ops and the Vulkan scan read key head h % n_k.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "model/weights.h"

namespace hl {

inline constexpr const char* kGgufArch = "qwen35moe";

// How the converter moves the value heads of a GDN tensor from HF's grouped order to GGUF's tiled order: along the
// rows or the columns of the oracle's [rows, cols] view, over n_v heads of head_dim starting at offset.
struct VHeadReorder {
  enum Axis { None, Rows, Cols } axis = None;
  int64_t offset = 0, head_dim = 0;
};

// The HF head that GGUF head position p holds: p = j * n_k + g holds HF head g * (n_v / n_k) + j, both reading key
// head g (SPEC 8.3: o(p) = 2 (p mod 16) + floor(p / 16) for 16 key and 32 value heads).
int64_t gguf_v_head_source(int64_t p, int n_k, int n_v);

// One tensor of a qwen35moe file.
struct GgufTensorDesc {
  std::string name;          // "blk.3.attn_qkv.weight"
  std::vector<int64_t> ne;   // ggml shape, ne0 (the row length) first; the oracle's [rows, cols] is [prod ne[1..], ne0]
  int layer = -1;            // block index, -1 for token_embd, output_norm, output
  bool keep_f32 = false;     // norms, router, conv1d, ssm_a, ssm_dt, vectors: F32 in every file, never quantized
  bool optional = false;     // output.weight: absent when the embeddings are tied
  VHeadReorder reorder;      // the converter's value-head permutation (GDN tensors)
};

// Visits every tensor of the layout of w.cfg in file order (token_embd, output_norm, output, then blk.0, blk.1, ...)
// with the WeightRef of w that it holds. w.layers must hold w.cfg.n_layers layers.
void for_each_gguf_tensor(ModelWeights& w, const std::function<void(const GgufTensorDesc&, WeightRef& slot)>& f);

// True for a path whose name ends in ".gguf" or a regular file that starts with the GGUF magic.
bool is_gguf_path(const std::string& path);

// A qwen35moe GGUF file, memory-mapped: config from its metadata (MTP blocks beyond block_count -
// nextn_predict_layers ignored), tensors dequantized to float on use; raw blocks through read_raw_rows.
// Accepts split gate/up experts or a fused ffn_gate_up_exps (gate rows first in every expert). Missing or
// mis-shaped tensors, a type the oracle cannot dequantize, or another arch: a one-line error naming it.
ModelWeights load_gguf(const std::string& path);

}  // namespace hl
