// Model configuration: read from an HF config.json (text config at top level or under text_config) or a
// built-in preset. Everything the forward pass needs to know about shapes lives here.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace hl {

enum class LayerKind { LinearAttention, FullAttention };

struct ModelConfig {
  // More layers than any model has: a config asking for more is refused before the per-layer schedule is built
  // (a checkpoint's tensors then bound the count further: load_hf, load_gguf).
  static constexpr int kMaxLayers = 65536;

  int hidden = 0;
  int n_layers = 0;
  int vocab = 0;
  double rms_eps = 1e-6;
  bool tie_embeddings = false;  // lm_head shares the embedding table
  std::vector<LayerKind> layer_kinds;  // one per layer; from layer_types or full_attention_interval

  // Gated full attention.
  int n_q_heads = 0, n_kv_heads = 0, head_dim = 0;
  int rope_dims = 0;  // head_dim * partial_rotary_factor; NeoX pairs (i, i + rope_dims/2)
  double rope_theta = 1e7;

  // Gated DeltaNet (linear attention).
  int lin_k_heads = 0, lin_v_heads = 0, lin_k_dim = 0, lin_v_dim = 0, conv_kernel = 0;

  // MoE.
  int n_experts = 0, top_k = 0, expert_ffn = 0, shared_ffn = 0;

  int key_dim() const { return lin_k_heads * lin_k_dim; }
  int value_dim() const { return lin_v_heads * lin_v_dim; }
  int conv_dim() const { return 2 * key_dim() + value_dim(); }  // q | k | v channels of the conv
  bool is_full(int layer) const { return layer_kinds.at(layer) == LayerKind::FullAttention; }
  int count(LayerKind k) const;

  // Throws hl::Error naming the first inconsistent field.
  void validate() const;
  std::string summary() const;

  static ModelConfig from_json(const nlohmann::json& j);  // a qwen3_5_moe or qwen3_5_moe_text config
  static ModelConfig from_file(const std::string& path);
  static ModelConfig preset(const std::string& name);  // "qwen36-35b-a3b" or "tiny"
  static std::vector<std::string> preset_names();
};

}  // namespace hl
