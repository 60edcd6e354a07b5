// Model weights as handles, not arrays: each WeightRef names a 2-D block [rows, cols] of a source that
// produces float rows on demand (a memory-mapped checkpoint in F32/F16/BF16, a seeded synthetic
// generator, or host memory). Executors materialise what an op needs, in their own precision and place,
// so a full-size checkpoint or synthetic model never has to fit in memory at once.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common.h"
#include "model/config.h"
#include "quant/blocks.h"

namespace hl {

class TensorSource {
 public:
  TensorSource(std::string name, int64_t rows, int64_t cols) : name_(std::move(name)), rows_(rows), cols_(cols) {}
  virtual ~TensorSource() = default;
  const std::string& name() const { return name_; }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  // Writes rows [r0, r0 + n) as float, row-major, into out (n * cols floats). Quantized sources
  // dequantize (the oracle's contract: the dequantized value is the weight).
  virtual void read_rows(int64_t r0, int64_t n, float* out) const = 0;

  // How the weight is stored: F32 for plain sources; a ggml block type (Q4_K, Q6_K, Q8_0, ...) for
  // quantized ones (GGUF), whose raw rows kernels may read directly, quant::row_bytes(type, cols) each.
  virtual quant::Type storage_type() const { return quant::Type::F32; }
  virtual void read_raw_rows(int64_t r0, int64_t n, void* out) const;

 private:
  std::string name_;
  int64_t rows_, cols_;
};

// How a stored tensor becomes the value the math uses (applied in the executor's precision).
enum class Transform {
  None,
  PlusOne,  // HF zero-centred RMSNorm weight w -> gain 1 + w (GGUF stores 1 + w already)
  NegExp,   // HF A_log -> A = -exp(A_log) (GGUF ssm_a stores A already)
};

struct WeightRef {
  std::shared_ptr<const TensorSource> src;
  int64_t row0 = 0, rows = 0, cols = 0;
  Transform transform = Transform::None;

  bool valid() const { return bool(src); }
  std::string name() const;
  int64_t numel() const { return rows * cols; }
  WeightRef slice_rows(int64_t r0, int64_t n) const;  // a sub-block of rows (one expert of a fused tensor)
  quant::Type storage_type() const { return src ? src->storage_type() : quant::Type::F32; }
  bool quantized() const { return storage_type() != quant::Type::F32; }
  void read_raw_rows(int64_t r0, int64_t n, void* out) const;  // relative to row0; raw storage blocks
  void read_rows(int64_t r0, int64_t n, float* out) const;  // relative to row0, transform NOT applied
  template <class S> Mat<S> to_mat() const;   // the whole block, transform applied, in precision S
  template <class S> Vec<S> to_vec() const;   // a [1, n] or [n, 1] block as a vector, transform applied
};

WeightRef whole(std::shared_ptr<const TensorSource> src, Transform t = Transform::None);

// Weights held in host memory (tests, transformed copies).
std::shared_ptr<const TensorSource> host_source(std::string name, Mat<float> m);

// Row-remapped views, so experts stored either way present one stacked tensor:
// stack_rows concatenates sources (per-expert checkpoint tensors) along rows;
// row_blocks takes n blocks of `block` rows, block b starting at source row b * stride + offset
// (the gate or up half of each expert of a fused [E, 2F, H] gate_up tensor).
std::shared_ptr<const TensorSource> stack_rows(std::string name, std::vector<std::shared_ptr<const TensorSource>> parts);
std::shared_ptr<const TensorSource> row_blocks(std::string name, std::shared_ptr<const TensorSource> src, int64_t n,
                                               int64_t block, int64_t stride, int64_t offset);

// Deterministic pseudo-random weights: element i of tensor `name` depends only on (seed, name, i), so any
// row block can be produced alone, in any order, on any machine.
struct SynthInit {
  enum Kind { Normal, Uniform } kind = Normal;
  float a = 0, b = 1;  // Normal: mean a, std b. Uniform: [a, b)
};
std::shared_ptr<const TensorSource> synthetic_source(std::string name, int64_t rows, int64_t cols, uint64_t seed,
                                                     SynthInit init);

struct AttentionWeights {
  WeightRef q, k, v, o;      // q: [2 * n_q * D, H] (query and gate interleaved per head), k/v: [n_kv * D, H]
  WeightRef q_norm, k_norm;  // [1, D], zero-centred (transform PlusOne from HF)
};

struct DeltaNetWeights {
  WeightRef qkv;    // [conv_dim, H]: rows q | k | v
  WeightRef z;      // [value_dim, H]
  WeightRef b, a;   // [n_v, H]
  WeightRef conv;   // [conv_dim, K]; tap 0 multiplies the oldest input
  WeightRef dt_bias;  // [1, n_v]
  WeightRef A;        // [1, n_v], A = -exp(A_log) (transform NegExp from HF)
  WeightRef norm;     // [1, d_v], plain gain of the gated RMSNorm
  WeightRef out;      // [H, value_dim]
};

struct ExpertWeights {
  WeightRef gate, up;  // [F, H]
  WeightRef down;      // [H, F]
};

struct MoeWeights {
  WeightRef router;       // [E, H]
  ExpertWeights experts;  // all E stacked: gate, up [E * F, H], down [E * H, F]
  ExpertWeights shared;
  WeightRef shared_gate;  // [1, H]
  int n_experts = 0;

  ExpertWeights expert(int e) const;  // expert e's rows of the stacked tensors
};

struct LayerWeights {
  LayerKind kind = LayerKind::LinearAttention;
  WeightRef input_norm, post_norm;  // [1, H], zero-centred
  AttentionWeights attn;            // full-attention layers
  DeltaNetWeights gdn;              // linear-attention layers
  MoeWeights moe;
};

struct ModelWeights {
  ModelConfig cfg;
  std::string origin;  // where the weights came from, for reports
  WeightRef embed;     // [V, H]
  WeightRef final_norm;
  WeightRef lm_head;   // [V, H]
  std::vector<LayerWeights> layers;
  // Value heads of the GDN tensors in GGUF's tiled order (head h reads key head h % n_k) rather than HF's
  // grouped order (h / (n_v / n_k)); llama.cpp's converter permutes them (SPEC 8.3).
  bool v_heads_tiled = false;

  // Keep only the first n layers (full-size runs on a small machine).
  void truncate_layers(int n);
};

// Visits every weight of the model with a stable role name ("embed", "layers.3.attn.q",
// "layers.0.moe.experts.17.down", ...), in a fixed order; f may replace the WeightRef.
void for_each_weight(ModelWeights& w, const std::function<void(const std::string& role, WeightRef&)>& f);

// HF checkpoint directory: config.json + safetensors (single or sharded), either tensor layout.
ModelWeights load_hf(const std::string& dir);
// Synthetic weights for any config, with the value scales of golden/hf-tiny's randomisation.
ModelWeights synthetic_weights(const ModelConfig& cfg, uint64_t seed);

}  // namespace hl
