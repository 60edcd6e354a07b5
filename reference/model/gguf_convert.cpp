#include "model/gguf_convert.h"

#include <omp.h>

#include "model/quant_source.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <chrono>
#include <cmath>
#include <exception>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model/gguf_blocks.h"
#include "quant/gguf.h"

namespace hl {

using quant::Type;

GgufQuant gguf_quant_from_name(const std::string& name) {
  std::string s = name;
  for (auto& ch : s) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  for (GgufQuant q : {GgufQuant::F32, GgufQuant::F16, GgufQuant::Q8_0, GgufQuant::Q4_K_M})
    if (s == gguf_quant_name(q)) return q;
  fail("unknown quantization '{}' (known: f32, f16, q8_0, q4_k_m)", name);
}

const char* gguf_quant_name(GgufQuant q) {
  switch (q) {
    case GgufQuant::F32: return "f32";
    case GgufQuant::F16: return "f16";
    case GgufQuant::Q8_0: return "q8_0";
    case GgufQuant::Q4_K_M: return "q4_k_m";
  }
  return "?";
}

namespace {

// llama.cpp's general.file_type (enum llama_ftype).
uint32_t file_type(GgufQuant q) {
  switch (q) {
    case GgufQuant::F32: return 0;     // LLAMA_FTYPE_ALL_F32
    case GgufQuant::F16: return 1;     // LLAMA_FTYPE_MOSTLY_F16
    case GgufQuant::Q8_0: return 7;    // LLAMA_FTYPE_MOSTLY_Q8_0
    case GgufQuant::Q4_K_M: return 15;  // LLAMA_FTYPE_MOSTLY_Q4_K_M
  }
  return 0;
}

bool divides(Type t, int64_t ne0) { return ne0 % quant::block_size(t) == 0; }

// llama-quantize, LLAMA_FTYPE_MOSTLY_Q4_K_M (src/llama-quant.cpp: llama_tensor_get_type_impl, then
// tensor_type_fallback), default type Q4_K, no imatrix, tensors visited in layer order (the loader's weights_map
// sorts by block). The rules that can fire for this arch:
//   output.weight (and token_embd when the embeddings are tied): Q6_K, or Q8_0 if ne0 % 256 != 0;
//   attn_qkv and attn_v share one counter i over the n attn_v-like tensors (one per block here, so i = block):
//     Q6_K where use_more_bits(i, n), and Q8_0 whatever i if the model has exactly 8 experts;
//   attn_k: Q8_0 with 8 experts; attn_output: Q5_K with 8 experts;
//   ffn_down_exps / ffn_down_shexp: Q6_K where use_more_bits(block, block_count);
//   every other quantizable tensor (token_embd, attn_q, attn_gate, ssm_alpha/beta, ssm_out, gate/up experts,
//   shared gate/up): Q4_K. keep_f32 tensors (norms, router, conv1d, ssm_a, ssm_dt, 1-D) stay F32.
// Rows whose length is not a multiple of the type's block fall back as tensor_type_fallback does: Q4_K -> Q5_0,
// Q5_K -> Q5_1, Q6_K -> Q8_0, and F16 if even 32 does not divide the row (hf-tiny's rows of 128 / 64 / 48 values).
// (llama-quantize would refuse a Q8_0 choice on such a row; F16 here.)
class Q4KMRecipe {
 public:
  Q4KMRecipe(const std::vector<GgufTensorDesc>& all, const ModelConfig& c) : n_layers_(c.n_layers), n_expert_(c.n_experts) {
    for (const auto& d : all) {
      n_attn_v_ += is_attn_v(d.name);
      tied_ &= d.name != "output.weight";
    }
  }

  Type next(const GgufTensorDesc& d) {
    const std::string& n = d.name;
    const int64_t ne0 = d.ne[0];
    Type t = Type::Q4_K;
    if (n == "output.weight" || (tied_ && n == "token_embd.weight")) {
      t = divides(Type::Q4_K, ne0) ? Type::Q6_K : Type::Q8_0;
    } else if (is_attn_v(n)) {
      if (use_more_bits(i_attn_v_, n_attn_v_)) t = Type::Q6_K;
      if (n_expert_ == 8) t = Type::Q8_0;
      ++i_attn_v_;
    } else if (has(n, "attn_k.weight")) {
      if (n_expert_ == 8) t = Type::Q8_0;
    } else if (has(n, "attn_output.weight")) {
      if (n_expert_ == 8) t = Type::Q5_K;
    } else if (has(n, "ffn_down")) {
      if (use_more_bits(d.layer, n_layers_)) t = Type::Q6_K;
    }
    if (!divides(t, ne0)) {
      t = t == Type::Q4_K ? Type::Q5_0 : t == Type::Q5_K ? Type::Q5_1 : t == Type::Q6_K ? Type::Q8_0 : t;
      if (!divides(t, ne0)) t = Type::F16;
    }
    return t;
  }

 private:
  static bool has(const std::string& n, const char* s) { return n.find(s) != std::string::npos; }
  static bool is_attn_v(const std::string& n) { return has(n, "attn_qkv.weight") || has(n, "attn_v.weight"); }
  static bool use_more_bits(int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

  int n_layers_, n_expert_, n_attn_v_ = 0, i_attn_v_ = 0;
  bool tied_ = true;
};

// The source index that GGUF index i (a row or a column, along r.axis) takes its values from.
int64_t reorder_source(const VHeadReorder& r, const ModelConfig& c, int64_t i) {
  if (r.axis == VHeadReorder::None || i < r.offset || i >= r.offset + c.lin_v_heads * r.head_dim) return i;
  const int64_t p = (i - r.offset) / r.head_dim, d = (i - r.offset) % r.head_dim;
  return r.offset + gguf_v_head_source(p, c.lin_k_heads, c.lin_v_heads) * r.head_dim + d;
}

// Rows [r0, r0 + n) of the tensor as the GGUF file holds it, as float: value heads moved (if `r`), transform applied.
void gguf_rows(const WeightRef& w, const VHeadReorder& r, const ModelConfig& c, int64_t r0, int64_t n, float* out) {
  const VHeadReorder rows = r.axis == VHeadReorder::Rows ? r : VHeadReorder{};
  for (int64_t i = 0; i < n;) {  // runs of consecutive source rows, one read each
    const int64_t s = reorder_source(rows, c, r0 + i);
    int64_t len = 1;
    while (i + len < n && reorder_source(rows, c, r0 + i + len) == s + len) ++len;
    if (w.transform == Transform::None) {
      w.read_rows(s, len, out + i * w.cols);
    } else {  // 1 + w, -exp(A_log) in fp32 as the converter does, by the oracle's own code (the same floats)
      const Mat<float> m = w.slice_rows(s, len).to_mat<float>();
      std::copy(m.data(), m.data() + m.size(), out + i * w.cols);
    }
    i += len;
  }
  if (r.axis == VHeadReorder::Cols) {
    std::vector<float> row(size_t(w.cols));
    for (int64_t i = 0; i < n; ++i) {
      float* x = out + i * w.cols;
      std::copy(x, x + w.cols, row.begin());
      for (int64_t j = 0; j < w.cols; ++j) x[j] = row[size_t(reorder_source(r, c, j))];
    }
  }
}

struct Item {
  GgufTensorDesc desc;
  WeightRef src;
  Type type = Type::F32;
};

std::vector<Item> layout_items(const ModelWeights& w0) {
  ModelWeights w = w0;  // handles only
  std::vector<Item> items;
  for_each_gguf_tensor(w, [&](const GgufTensorDesc& d, WeightRef& slot) {
    if (d.optional && w.cfg.tie_embeddings) return;  // tied: no output.weight, llama.cpp reuses token_embd
    if (!slot.valid()) fail("gguf: the model has no weight for '{}'", d.name);
    int64_t numel = 1;
    for (int64_t x : d.ne) numel *= x;
    if (slot.cols != d.ne[0] || slot.numel() != numel)
      fail("gguf: weight '{}' [{}, {}] does not fit '{}' (ne0 {}, {} values)", slot.name(), slot.rows, slot.cols,
           d.name, d.ne[0], numel);
    items.push_back({d, slot});
  });
  return items;
}

void assign_types(std::vector<Item>& items, const ModelConfig& c, GgufQuant q) {
  std::vector<GgufTensorDesc> all;
  for (const auto& it : items) all.push_back(it.desc);
  Q4KMRecipe q4km(all, c);
  for (auto& it : items) {
    const int64_t ne0 = it.desc.ne[0];
    if (it.desc.keep_f32 || q == GgufQuant::F32) it.type = Type::F32;
    else if (q == GgufQuant::F16) it.type = Type::F16;
    else if (q == GgufQuant::Q8_0) it.type = divides(Type::Q8_0, ne0) ? Type::Q8_0 : Type::F16;  // converter: "falling back to F16"
    else it.type = q4km.next(it.desc);
  }
}

void set_metadata(quant::Writer& out, const ModelConfig& c, const GgufWriteOptions& o) {
  auto u32 = [](int64_t v) { return quant::Value(uint32_t(v)); };
  auto k = [](const char* s) { return fmt::format("{}.{}", kGgufArch, s); };
  out.set("general.architecture", kGgufArch);
  out.set("general.type", "model");
  out.set("general.name", o.name);
  out.set("general.file_type", u32(file_type(o.quant)));
  out.set("general.quantization_version", u32(2));  // GGML_QNT_VERSION
  out.set(k("block_count"), u32(c.n_layers));
  out.set(k("context_length"), u32(o.context_length));
  out.set(k("embedding_length"), u32(c.hidden));
  out.set(k("attention.head_count"), u32(c.n_q_heads));
  out.set(k("attention.head_count_kv"), u32(c.n_kv_heads));
  out.set(k("rope.freq_base"), float(c.rope_theta));
  out.set(k("attention.layer_norm_rms_epsilon"), float(c.rms_eps));
  out.set(k("expert_count"), u32(c.n_experts));
  out.set(k("expert_used_count"), u32(c.top_k));
  out.set(k("attention.key_length"), u32(c.head_dim));
  out.set(k("attention.value_length"), u32(c.head_dim));
  out.set(k("expert_feed_forward_length"), u32(c.expert_ffn));
  out.set(k("expert_shared_feed_forward_length"), u32(c.shared_ffn));
  out.set(k("ssm.conv_kernel"), u32(c.conv_kernel));
  out.set(k("ssm.state_size"), u32(c.lin_k_dim));
  out.set(k("ssm.group_count"), u32(c.lin_k_heads));
  out.set(k("ssm.time_step_rank"), u32(c.lin_v_heads));
  out.set(k("ssm.inner_size"), u32(c.value_dim()));
  // The converter writes full_attention_interval; a schedule no interval describes gets one flag per block.
  int interval = 0;
  for (int n = 1; n <= c.n_layers + 1 && !interval; ++n) {
    const int cand = n == 1 ? 4 : n;  // the model's 4 first
    bool ok = true;
    for (int i = 0; i < c.n_layers; ++i) ok &= c.is_full(i) == ((i + 1) % cand == 0);
    if (ok) interval = cand;
  }
  if (interval) {
    out.set(k("full_attention_interval"), u32(interval));
  } else {
    std::vector<quant::Value> items;
    for (int i = 0; i < c.n_layers; ++i) items.emplace_back(bool(!c.is_full(i)));
    out.set(k("attention.recurrent_layers"), quant::Value::array(quant::ValueType::BOOL, std::move(items)));
  }
  out.set(k("rope.dimension_count"), u32(c.rope_dims));
  out.set(k("rope.dimension_sections"), quant::Value::array_of<int32_t>(o.rope_sections));
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

std::string GgufWriteSummary::describe() const {
  int n = 0;
  std::string types;
  for (const auto& [t, k] : type_counts) n += k, types += fmt::format("{}{} {}", types.empty() ? "" : ", ", k, t);
  return fmt::format("{:.3f} GB, {} tensors ({})", double(bytes) * 1e-9, n, types);
}

GgufWriteSummary write_gguf(const ModelWeights& w, const std::string& path, const GgufWriteOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  const ModelConfig& c = w.cfg;
  std::vector<Item> items = layout_items(w);
  assign_types(items, c, o.quant);
  quant::Writer out;
  set_metadata(out, c, o);
  const GgufVocab vocab = o.vocab ? *o.vocab : placeholder_vocab(c.vocab);
  vocab.check(c.vocab);
  vocab.write(out, kGgufArch);
  for (const Item& it : items) {
    const Item* p = &it;  // items outlive out.write()
    out.add_tensor(it.desc.name, it.type, it.desc.ne, [p, &c, &o, tiled = w.v_heads_tiled](const quant::Writer::Sink& sink) {
      const auto t1 = std::chrono::steady_clock::now();
      const WeightRef& src = p->src;
      const VHeadReorder r = tiled ? VHeadReorder{} : p->desc.reorder;
      const int64_t cols = src.cols, chunk = std::max<int64_t>(1, (int64_t(1) << 22) / cols);  // 16 MB of floats
      const size_t rb = quant::row_bytes(p->type, cols);
      std::vector<float> x;
      std::vector<uint8_t> q;
      if (o.random_blocks && has_random_blocks(p->type)) {
        const uint64_t per_row = rb / quant::block_bytes(p->type), seed = std::hash<std::string>{}(p->desc.name);
        for (int64_t r0 = 0; r0 < src.rows; r0 += chunk) {
          const int64_t n = std::min(chunk, src.rows - r0);
          q.resize(size_t(n) * rb);
          random_blocks(p->type, q.data(), uint64_t(r0) * per_row, uint64_t(n) * per_row, seed, 1.0f / std::sqrt(float(cols)));
          sink(q.data(), q.size());
        }
        if (o.on_tensor) o.on_tensor(p->desc, p->type, seconds_since(t1));
        return;
      }
      for (int64_t r0 = 0; r0 < src.rows; r0 += chunk) {
        const int64_t n = std::min(chunk, src.rows - r0);
        x.resize(size_t(n * cols));
        q.resize(size_t(n) * rb);
        gguf_rows(src, r, c, r0, n, x.data());
        std::exception_ptr err;
#pragma omp parallel for schedule(dynamic, 16) if (n * cols >= (1 << 16))
        for (int64_t i = 0; i < n; ++i) {
          try {
            gguf_quantize_row(p->type, x.data() + i * cols, q.data() + size_t(i) * rb, cols);
          } catch (...) {
#pragma omp critical
            if (!err) err = std::current_exception();
          }
        }
        if (err) {
          try {
            std::rethrow_exception(err);
          } catch (const std::exception& e) {
            fail("gguf: tensor '{}': {}", p->desc.name, e.what());
          }
        }
        sink(q.data(), q.size());
      }
      if (o.on_tensor) o.on_tensor(p->desc, p->type, seconds_since(t1));
    });
  }
  out.write(path);
  GgufWriteSummary s;
  s.bytes = out.file_size();
  for (const auto& it : items) ++s.type_counts[quant::type_name(it.type)];
  s.seconds = seconds_since(t0);
  s.vocab = vocab.describe();
  return s;
}

GgufWriteOptions gguf_options_for_hf(const std::string& hf_dir, GgufQuant q, int64_t n_vocab) {
  GgufWriteOptions o;
  o.quant = q;
  o.vocab = hf_vocab(hf_dir, n_vocab);
  const std::filesystem::path dir = std::filesystem::path(hf_dir).lexically_normal();
  o.name = (dir.has_filename() ? dir.filename() : dir.parent_path().filename()).string();
  // What the converter reads besides the weights: max_position_embeddings and rope_parameters.mrope_section.
  std::ifstream f(hf_dir + "/config.json");
  const nlohmann::json root = nlohmann::json::parse(f, nullptr, false);
  if (!root.is_object()) return o;
  const nlohmann::json& j = root.contains("text_config") ? root["text_config"] : root;
  // Both end up in u32 / i32 fields: checked, so that a wild value is an error rather than a wrapped number.
  if (j.contains("max_position_embeddings") && j["max_position_embeddings"].is_number_integer()) {
    const nlohmann::json& v = j["max_position_embeddings"];
    if (v.is_number_unsigned() ? v.get<uint64_t>() > UINT32_MAX : true)
      fail("'{}/config.json': max_position_embeddings {} is not in [0, 2^32)", hf_dir, v.dump());
    o.context_length = int64_t(v.get<uint64_t>());
  }
  if (j.contains("rope_parameters") && j["rope_parameters"].is_object() && j["rope_parameters"].contains("mrope_section")) {
    const nlohmann::json& m = j["rope_parameters"]["mrope_section"];
    const bool ok = m.is_array() && m.size() <= 4 && std::all_of(m.begin(), m.end(), [](const nlohmann::json& x) {
      return x.is_number_unsigned() && x.get<uint64_t>() <= uint64_t(INT32_MAX);
    });
    if (!ok) fail("'{}/config.json': rope_parameters.mrope_section must be up to 4 non-negative integers", hf_dir);
    o.rope_sections.clear();
    for (const auto& x : m) o.rope_sections.push_back(int32_t(x.get<uint64_t>()));
    o.rope_sections.resize(4, 0);
  }
  return o;
}

// The scales of a freshly initialised transformers Qwen3.5-MoE (_init_weights with initializer_range 0.02, the
// default and hf-tiny's value): N(0, 0.02^2) for the embeddings, every projection, the router and the experts; the
// causal conv's default kaiming-uniform bound 1/sqrt(kernel) = 0.5; A = -exp(A_log) with A log-uniform in [1, 16]
// (transformers draws A from U(0, 16)); dt_bias near its init of 1. Two departures, so that a convention bug still
// shows in the numbers: the zero-centred norm gains 1 + w have w ~ N(0, 0.1^2) (not exactly 0), and the gated
// norm's gain is N(1, 0.1^2). Why: at full size 0.02 keeps every projection's output RMS within a factor of about 2
// of its input's (0.02 sqrt(2048) = 0.9, 0.02 sqrt(4096) = 1.3, 0.02 sqrt(512) = 0.45), so each block adds O(1) to
// the residual stream, which grows like sqrt(layers), as in a real model at init, and stays in range; 0.02 also gives
// the K-quant blocks the value range of real weights. Measured (`hybridlab synth --check N`: the oracle over a
// 16-token prompt, hidden-state RMS): embedding 0.020, after layer 0 0.45, layer 11 1.50 (f32 weights);
ModelWeights synth_gguf_weights(const ModelConfig& c, uint64_t seed) {
  ModelWeights w = synthetic_weights(c, seed);
  w.origin = fmt::format("synth:seed={}", seed);
  for_each_weight(w, [&](const std::string& role, WeightRef& r) {
    auto is = [&](const char* s) { return role.ends_with(s); };
    SynthInit init{SynthInit::Normal, 0.0f, 0.02f};
    if (is("gdn.norm")) init = {SynthInit::Normal, 1.0f, 0.1f};
    else if (is("norm")) init = {SynthInit::Normal, 0.0f, 0.1f};
    else if (is("gdn.conv")) init = {SynthInit::Uniform, -0.5f, 0.5f};
    else if (is("gdn.A")) init = {SynthInit::Uniform, 0.0f, std::log(16.0f)};
    else if (is("gdn.dt_bias")) init = {SynthInit::Uniform, 0.5f, 1.5f};
    r.src = synthetic_source(r.src->name(), r.src->rows(), r.src->cols(), seed, init);
  });
  return w;
}

}  // namespace hl
