#include "model/config.h"

#include <climits>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "common.h"
#include "quant/error.h"

namespace hl {

int ModelConfig::count(LayerKind k) const {
  int n = 0;
  for (auto x : layer_kinds) n += (x == k);
  return n;
}

void ModelConfig::validate() const {
  auto need = [](bool ok, const char* what) {
    if (!ok) fail("invalid model config: {}", what);
  };
  need(hidden > 0 && n_layers > 0 && vocab > 0, "hidden_size, num_hidden_layers and vocab_size must be positive");
  need(int64_t(layer_kinds.size()) == int64_t(n_layers), "layer_types must have num_hidden_layers entries");
  need(n_q_heads > 0 && n_kv_heads > 0 && head_dim > 0, "attention head counts and head_dim must be positive");
  need(n_q_heads % n_kv_heads == 0, "num_attention_heads must be a multiple of num_key_value_heads");
  need(rope_dims >= 0 && rope_dims <= head_dim && rope_dims % 2 == 0,
       "head_dim * partial_rotary_factor must be an even number <= head_dim");
  need(lin_k_heads > 0 && lin_v_heads > 0 && lin_k_dim > 0 && lin_v_dim > 0 && conv_kernel > 0,
       "linear attention head counts, dims and conv kernel must be positive");
  need(lin_v_heads % lin_k_heads == 0, "linear_num_value_heads must be a multiple of linear_num_key_heads");
  need(n_experts > 0 && top_k > 0 && top_k <= n_experts && expert_ffn > 0 && shared_ffn > 0,
       "num_experts, num_experts_per_tok (<= num_experts) and the ffn widths must be positive");
  need(rms_eps > 0, "rms_norm_eps must be positive");
  need(n_layers <= kMaxLayers, "num_hidden_layers is larger than hybridlab's limit of 65536");
  // Derived widths are ints (key_dim(), conv_dim(), ...) and row counts of the weights: each must fit.
  const int64_t kd = int64_t(lin_k_heads) * lin_k_dim, vd = int64_t(lin_v_heads) * lin_v_dim;
  need(2 * kd + vd <= INT32_MAX, "the linear attention widths (heads x head dims) overflow");
  need(2 * int64_t(n_q_heads) * head_dim <= INT32_MAX && int64_t(n_kv_heads) * head_dim <= INT32_MAX,
       "the attention widths (heads x head_dim) overflow");
}

std::string ModelConfig::summary() const {
  return fmt::format(
      "hidden {}, {} layers ({} gated-deltanet + {} full-attention), vocab {}; attention {} q / {} kv heads of {}, "
      "rope {} dims theta {:g}; deltanet {} k / {} v heads of {} / {}, conv {}; moe {} experts top-{} width {}, "
      "shared {}",
      hidden, n_layers, count(LayerKind::LinearAttention), count(LayerKind::FullAttention), vocab, n_q_heads,
      n_kv_heads, head_dim, rope_dims, rope_theta, lin_k_heads, lin_v_heads, lin_k_dim, lin_v_dim, conv_kernel,
      n_experts, top_k, expert_ffn, shared_ffn);
}

namespace {

template <class T>
T get(const nlohmann::json& j, const char* key) {
  if (!j.contains(key)) fail("config.json: missing field '{}'", key);
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // Checked before converting: nlohmann's get<int>() of 1e60 is undefined behaviour, of 2^40 it wraps, of 2.5 it
    // truncates.
    const nlohmann::json& v = j.at(key);
    if (!v.is_number() || (v.is_number_float() && std::trunc(v.get<double>()) != v.get<double>()))
      fail("config.json: field '{}' has the wrong type (expected an integer)", key);
    constexpr auto lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    const bool in_range = v.is_number_unsigned() ? v.get<uint64_t>() <= uint64_t(hi)
                          : v.is_number_integer() ? v.get<int64_t>() >= lo && v.get<int64_t>() <= hi
                                                  : v.get<double>() >= double(lo) && v.get<double>() <= double(hi);
    if (!in_range) fail("config.json: field '{}' = {} is out of range", key, v.dump());
  }
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    fail("config.json: field '{}' has the wrong type", key);
  }
}

template <class T>
T get_or(const nlohmann::json& j, const char* key, T fallback) {
  if (!j.contains(key) || j.at(key).is_null()) return fallback;
  return get<T>(j, key);
}

}  // namespace

ModelConfig ModelConfig::from_json(const nlohmann::json& root) {
  if (!root.is_object()) fail("config.json: not a JSON object");
  // The multimodal wrapper (model_type qwen3_5_moe) nests the text trunk under text_config.
  const nlohmann::json& j = root.contains("text_config") ? root.at("text_config") : root;
  const std::string type = get_or<std::string>(j, "model_type", "");
  if (!type.empty() && type != "qwen3_5_moe_text" && type != "qwen3_5_moe")
    fail("config.json: model_type {} is not a Qwen3.5/3.6 MoE text model", quant::printable(type));

  ModelConfig c;
  c.hidden = get<int>(j, "hidden_size");
  c.n_layers = get<int>(j, "num_hidden_layers");
  c.vocab = get<int>(j, "vocab_size");
  c.rms_eps = get_or<double>(j, "rms_norm_eps", 1e-6);
  c.tie_embeddings = get_or<bool>(j, "tie_word_embeddings", get_or<bool>(root, "tie_word_embeddings", false));
  c.n_q_heads = get<int>(j, "num_attention_heads");
  c.n_kv_heads = get<int>(j, "num_key_value_heads");
  c.head_dim = get_or<int>(j, "head_dim", c.n_q_heads > 0 ? c.hidden / c.n_q_heads : 0);
  c.lin_k_heads = get<int>(j, "linear_num_key_heads");
  c.lin_v_heads = get<int>(j, "linear_num_value_heads");
  c.lin_k_dim = get<int>(j, "linear_key_head_dim");
  c.lin_v_dim = get<int>(j, "linear_value_head_dim");
  c.conv_kernel = get<int>(j, "linear_conv_kernel_dim");
  c.n_experts = get<int>(j, "num_experts");
  c.top_k = get<int>(j, "num_experts_per_tok");
  c.expert_ffn = get<int>(j, "moe_intermediate_size");
  c.shared_ffn = get<int>(j, "shared_expert_intermediate_size");

  // rope_parameters (transformers 5) wins over the legacy top-level fields; HF's default factor is 0.25.
  double prf = get_or<double>(j, "partial_rotary_factor", 0.25);
  c.rope_theta = get_or<double>(j, "rope_theta", 1e7);
  if (j.contains("rope_parameters") && j.at("rope_parameters").is_object()) {
    const auto& rp = j.at("rope_parameters");
    prf = get_or<double>(rp, "partial_rotary_factor", prf);
    c.rope_theta = get_or<double>(rp, "rope_theta", c.rope_theta);
  }
  if (!(prf >= 0 && prf <= 1)) fail("config.json: partial_rotary_factor {} is not in [0, 1]", prf);
  c.rope_dims = int(std::lround(c.head_dim * prf));

  if (j.contains("layer_types") && !j.at("layer_types").is_null()) {
    if (!j.at("layer_types").is_array()) fail("config.json: layer_types is not an array");
    for (const auto& t : j.at("layer_types")) {
      const std::string s = t.is_string() ? t.get<std::string>() : "";
      if (s == "linear_attention") c.layer_kinds.push_back(LayerKind::LinearAttention);
      else if (s == "full_attention") c.layer_kinds.push_back(LayerKind::FullAttention);
      else fail("config.json: unknown layer type '{}' in layer_types", t.dump());
    }
  } else {
    // HF rule: "linear_attention" if (i+1) % interval else "full_attention".
    const int interval = get_or<int>(j, "full_attention_interval", 4);
    if (interval <= 0) fail("config.json: full_attention_interval must be positive");
    // The schedule is generated from the count alone: bounded before anything is allocated.
    if (c.n_layers < 0 || c.n_layers > kMaxLayers)
      fail("config.json: num_hidden_layers {} is not in [1, {}]", c.n_layers, kMaxLayers);
    for (int i = 0; i < c.n_layers; ++i)
      c.layer_kinds.push_back((i + 1) % interval ? LayerKind::LinearAttention : LayerKind::FullAttention);
  }
  c.validate();
  return c;
}

ModelConfig ModelConfig::from_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) fail("cannot open config file '{}'", path);
  nlohmann::json j;
  try {
    f >> j;
  } catch (const nlohmann::json::exception& e) {
    fail("config file '{}' is not valid JSON: {}", path, e.what());
  }
  return from_json(j);
}

std::vector<std::string> ModelConfig::preset_names() { return {"qwen36-35b-a3b", "tiny"}; }

ModelConfig ModelConfig::preset(const std::string& name) {
  ModelConfig c;
  if (name == "qwen36-35b-a3b") {  // SPEC section 1
    c.hidden = 2048, c.n_layers = 40, c.vocab = 248320, c.rms_eps = 1e-6;
    c.n_q_heads = 16, c.n_kv_heads = 2, c.head_dim = 256, c.rope_dims = 64, c.rope_theta = 1e7;
    c.lin_k_heads = 16, c.lin_v_heads = 32, c.lin_k_dim = 128, c.lin_v_dim = 128, c.conv_kernel = 4;
    c.n_experts = 256, c.top_k = 8, c.expert_ffn = 512, c.shared_ffn = 512;
  } else if (name == "tiny") {  // the shape of golden/hf-tiny: every feature, small
    c.hidden = 128, c.n_layers = 4, c.vocab = 512, c.rms_eps = 1e-6;
    c.n_q_heads = 4, c.n_kv_heads = 2, c.head_dim = 64, c.rope_dims = 16, c.rope_theta = 1e7;
    c.lin_k_heads = 2, c.lin_v_heads = 4, c.lin_k_dim = 32, c.lin_v_dim = 32, c.conv_kernel = 4;
    c.n_experts = 8, c.top_k = 2, c.expert_ffn = 48, c.shared_ffn = 64;
  } else {
    fail("unknown preset '{}' (known: qwen36-35b-a3b, tiny)", name);
  }
  for (int i = 0; i < c.n_layers; ++i)
    c.layer_kinds.push_back((i + 1) % 4 ? LayerKind::LinearAttention : LayerKind::FullAttention);
  c.validate();
  return c;
}

}  // namespace hl
