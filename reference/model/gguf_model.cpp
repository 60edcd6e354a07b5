#include "model/gguf_model.h"

#include <omp.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <type_traits>
#include <variant>

#include <fmt/ranges.h>

#include "model/gguf_blocks.h"
#include "model/gguf_vocab.h"
#include "quant/gguf.h"

namespace hl {

int64_t gguf_v_head_source(int64_t p, int n_k, int n_v) { return (p % n_k) * (n_v / n_k) + p / n_k; }

void for_each_gguf_tensor(ModelWeights& w, const std::function<void(const GgufTensorDesc&, WeightRef&)>& f) {
  const ModelConfig& c = w.cfg;
  if (int(w.layers.size()) != c.n_layers) fail("gguf layout: {} layers of weights for a config of {}", w.layers.size(), c.n_layers);
  const int64_t H = c.hidden, D = c.head_dim, E = c.n_experts, F = c.expert_ffn, Fs = c.shared_ffn;
  const int64_t kd = c.key_dim(), vd = c.value_dim(), cd = c.conv_dim(), nv = c.lin_v_heads, dv = c.lin_v_dim;
  const int64_t nq = c.n_q_heads, nkv = c.n_kv_heads;
  using R = VHeadReorder;
  auto t = [&](std::string name, std::vector<int64_t> ne, WeightRef& slot, int layer, bool keep_f32 = false,
               VHeadReorder r = {}) { f(GgufTensorDesc{std::move(name), std::move(ne), layer, keep_f32, false, r}, slot); };
  t("token_embd.weight", {H, c.vocab}, w.embed, -1);
  t("output_norm.weight", {H}, w.final_norm, -1, true);
  f(GgufTensorDesc{"output.weight", {H, c.vocab}, -1, false, true, {}}, w.lm_head);
  for (int i = 0; i < c.n_layers; ++i) {
    LayerWeights& L = w.layers[size_t(i)];
    auto b = [&](const char* s) { return fmt::format("blk.{}.{}", i, s); };
    t(b("attn_norm.weight"), {H}, L.input_norm, i, true);
    t(b("post_attention_norm.weight"), {H}, L.post_norm, i, true);
    if (c.is_full(i)) {
      t(b("attn_q.weight"), {H, 2 * nq * D}, L.attn.q, i);
      t(b("attn_k.weight"), {H, nkv * D}, L.attn.k, i);
      t(b("attn_v.weight"), {H, nkv * D}, L.attn.v, i);
      t(b("attn_output.weight"), {nq * D, H}, L.attn.o, i);
      t(b("attn_q_norm.weight"), {D}, L.attn.q_norm, i, true);
      t(b("attn_k_norm.weight"), {D}, L.attn.k_norm, i, true);
    } else {
      t(b("attn_qkv.weight"), {H, cd}, L.gdn.qkv, i, false, {R::Rows, 2 * kd, dv});  // only the v rows move
      t(b("attn_gate.weight"), {H, vd}, L.gdn.z, i, false, {R::Rows, 0, dv});
      t(b("ssm_beta.weight"), {H, nv}, L.gdn.b, i, false, {R::Rows, 0, 1});
      t(b("ssm_alpha.weight"), {H, nv}, L.gdn.a, i, false, {R::Rows, 0, 1});
      t(b("ssm_conv1d.weight"), {c.conv_kernel, cd}, L.gdn.conv, i, true, {R::Rows, 2 * kd, dv});
      t(b("ssm_dt.bias"), {nv}, L.gdn.dt_bias, i, true, {R::Cols, 0, 1});
      t(b("ssm_a"), {nv}, L.gdn.A, i, true, {R::Cols, 0, 1});
      t(b("ssm_norm.weight"), {dv}, L.gdn.norm, i, true);  // one gain shared by every head: no reorder
      t(b("ssm_out.weight"), {vd, H}, L.gdn.out, i, false, {R::Cols, 0, dv});
    }
    t(b("ffn_gate_inp.weight"), {H, E}, L.moe.router, i, true);
    t(b("ffn_gate_exps.weight"), {H, F, E}, L.moe.experts.gate, i);
    t(b("ffn_up_exps.weight"), {H, F, E}, L.moe.experts.up, i);
    t(b("ffn_down_exps.weight"), {F, H, E}, L.moe.experts.down, i);
    t(b("ffn_gate_inp_shexp.weight"), {H}, L.moe.shared_gate, i, true);
    t(b("ffn_gate_shexp.weight"), {H, Fs}, L.moe.shared.gate, i);
    t(b("ffn_up_shexp.weight"), {H, Fs}, L.moe.shared.up, i);
    t(b("ffn_down_shexp.weight"), {Fs, H}, L.moe.shared.down, i);
  }
}

bool is_gguf_path(const std::string& path) {
  if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".gguf") == 0) return true;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  char magic[4] = {};
  std::ifstream(path, std::ios::binary).read(magic, 4);
  return std::memcmp(magic, "GGUF", 4) == 0;
}

namespace {

// One tensor of a memory-mapped GGUF file, [n_rows, ne0]; the Reader (and its mapping) lives as long as any source.
class GgufSource final : public TensorSource {
 public:
  GgufSource(std::shared_ptr<const quant::Reader> file, const quant::TensorInfo& t)
      : TensorSource(t.name, t.n_rows(), t.ne[0]), file_(std::move(file)), t_(t) {}

  void read_rows(int64_t r0, int64_t n, float* out) const override {
    if (t_.type == quant::Type::F32) {
      std::memcpy(out, t_.row(r0), size_t(n * cols()) * sizeof(float));
      return;
    }
#pragma omp parallel for schedule(static) if (n * cols() > (1 << 16))
    for (int64_t i = 0; i < n; ++i) gguf_dequantize_row(t_.type, t_.row(r0 + i), out + i * cols(), cols());
  }
  quant::Type storage_type() const override { return t_.type; }
  void read_raw_rows(int64_t r0, int64_t n, void* out) const override {
    std::memcpy(out, t_.row(r0), size_t(n) * t_.row_bytes());
  }

 private:
  std::shared_ptr<const quant::Reader> file_;
  const quant::TensorInfo& t_;  // owned by file_
};

std::vector<int64_t> trimmed(std::vector<int64_t> ne) {  // ggml ignores trailing 1s: {2048, 1} is {2048}
  while (ne.size() > 1 && ne.back() == 1) ne.pop_back();
  return ne;
}

std::string ne_str(const std::vector<int64_t>& ne) { return fmt::format("{{{}}}", fmt::join(ne, ", ")); }

// The config of a qwen35moe file from its metadata (SPEC 1, GGUF metadata; llama.cpp's load_arch_hparams).
class GgufConfigReader {
 public:
  explicit GgufConfigReader(const quant::Reader& f) : f_(f), m_(f.metadata()) {}

  ModelConfig read() const {
    const std::string arch = m_.has("general.architecture") ? m_.get_string("general.architecture") : "(none)";
    if (arch != kGgufArch)
      fail("'{}': general.architecture is '{}', expected '{}' (Qwen3.5/3.6 MoE)", f_.path(), arch, kGgufArch);
    ModelConfig c;
    const int blocks = num("block_count"), nextn = num("nextn_predict_layers", 0);
    if (nextn >= blocks) fail("'{}': nextn_predict_layers {} leaves none of the {} blocks", f_.path(), nextn, blocks);
    c.n_layers = blocks - nextn;  // MTP blocks come last and are never run
    // A count from the file: checked against the blocks its tensors cover before anything per block is allocated.
    if (const int64_t present = blocks_present(); c.n_layers > present)
      fail("'{}': {} is {} but the file holds tensors of {} blocks", f_.path(), key("block_count"), blocks, present);
    c.hidden = num("embedding_length");
    c.rms_eps = real("attention.layer_norm_rms_epsilon");
    c.n_q_heads = num("attention.head_count");
    c.n_kv_heads = num("attention.head_count_kv");
    c.head_dim = num("attention.key_length", c.n_q_heads > 0 ? c.hidden / c.n_q_heads : 0);
    if (num("attention.value_length", c.head_dim) != c.head_dim)
      fail("'{}': attention.value_length {} differs from key_length {}", f_.path(), num("attention.value_length"), c.head_dim);
    c.rope_dims = num("rope.dimension_count", c.head_dim);
    c.rope_theta = real("rope.freq_base", 10000.0);  // llama.cpp's default
    // llama.cpp: head_k_dim = ssm_d_state, n_k = ssm_n_group, n_v = ssm_dt_rank, head_v_dim = ssm_d_inner / n_v.
    c.lin_k_dim = num("ssm.state_size");
    c.lin_k_heads = num("ssm.group_count");
    c.lin_v_heads = num("ssm.time_step_rank");
    const int inner = num("ssm.inner_size");
    if (c.lin_v_heads <= 0 || inner % c.lin_v_heads != 0)
      fail("'{}': ssm.inner_size {} is not a multiple of ssm.time_step_rank {}", f_.path(), inner, c.lin_v_heads);
    c.lin_v_dim = inner / c.lin_v_heads;
    c.conv_kernel = num("ssm.conv_kernel");
    c.n_experts = num("expert_count");
    c.top_k = num("expert_used_count");
    c.expert_ffn = num("expert_feed_forward_length");
    c.shared_ffn = num("expert_shared_feed_forward_length");
    const quant::TensorInfo* embd = f_.find_tensor("token_embd.weight");
    if (!embd) fail("'{}': missing tensor 'token_embd.weight'", f_.path());
    if (embd->ne[1] < 1 || embd->ne[1] > INT_MAX)
      fail("'{}': token_embd.weight has {} rows, expected 1 to {}", f_.path(), embd->ne[1], INT_MAX);
    c.vocab = int(embd->ne[1]);
    read_gguf_vocab(m_, c.vocab);  // llama.cpp's checks of the tokenizer metadata, if the file has one
    c.layer_kinds = layer_kinds(blocks, c.n_layers);
    try {
      c.validate();
    } catch (const Error& e) {
      fail("'{}': {}", f_.path(), e.what());
    }
    return c;
  }

 private:
  std::string key(const char* k) const { return fmt::format("{}.{}", kGgufArch, k); }

  // Distinct block indices N of the tensors named "blk.N.*".
  int64_t blocks_present() const {
    std::set<int64_t> seen;
    for (const quant::TensorInfo& t : f_.tensors()) {
      const std::string& n = t.name;
      if (n.compare(0, 4, "blk.") != 0) continue;
      const size_t dot = n.find('.', 4);
      if (dot == std::string::npos || dot == 4 || dot - 4 > 9) continue;
      if (std::all_of(n.begin() + 4, n.begin() + ptrdiff_t(dot), [](char ch) { return ch >= '0' && ch <= '9'; }))
        seen.insert(std::stoll(n.substr(4, dot - 4)));
    }
    return int64_t(seen.size());
  }

  int num(const char* k, std::optional<int64_t> fallback = std::nullopt) const {
    if (fallback && !m_.has(key(k))) return int(*fallback);
    const int64_t v = m_.get_int(key(k));  // a missing key or a non-integer: an error naming the file and the key
    if (v < 0 || v > INT_MAX) fail("'{}': metadata {} = {} is out of range", f_.path(), key(k), v);
    return int(v);
  }

  // An f32 value as the shortest decimal that rounds to it: what the converter wrote (1e-6, not 9.99999997e-7).
  double real(const char* k, std::optional<double> fallback = std::nullopt) const {
    if (fallback && !m_.has(key(k))) return *fallback;
    const double v = m_.get_float(key(k));
    if (m_.at(key(k)).type() != quant::ValueType::FLOAT32) return v;
    return std::strtod(fmt::format("{}", float(v)).c_str(), nullptr);
  }

  // attention.recurrent_layers (one flag per block, or one for all) if present, else llama.cpp's rule
  // recurrent = (i + 1) % full_attention_interval != 0.
  std::vector<LayerKind> layer_kinds(int blocks, int n_layers) const {
    std::vector<LayerKind> kinds;
    const quant::Value* rec = m_.find(key("attention.recurrent_layers"));
    auto kind = [](bool recurrent) { return recurrent ? LayerKind::LinearAttention : LayerKind::FullAttention; };
    if (rec) {
      const quant::Array* arr = rec->get_if<quant::Array>();
      if (arr && int64_t(arr->items.size()) != blocks)
        fail("'{}': {} has {} entries for {} blocks", f_.path(), key("attention.recurrent_layers"), arr->items.size(), blocks);
      for (int i = 0; i < n_layers; ++i) kinds.push_back(kind(flag(arr ? arr->items[size_t(i)] : *rec)));
      return kinds;
    }
    const int interval = num("full_attention_interval", 4);
    if (interval <= 0) fail("'{}': {} must be positive", f_.path(), key("full_attention_interval"));
    for (int i = 0; i < n_layers; ++i) kinds.push_back(kind((i + 1) % interval != 0));
    return kinds;
  }

  bool flag(const quant::Value& v) const {
    return std::visit(
        [&](const auto& x) -> bool {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_arithmetic_v<T>) return x != 0;
          fail("'{}': {} holds a {}, expected bools or integers", f_.path(), key("attention.recurrent_layers"),
               quant::value_type_name(v.type()));
        },
        v.v);
  }

  const quant::Reader& f_;
  const quant::Metadata& m_;
};

}  // namespace

ModelWeights load_gguf(const std::string& path) {
  auto file = std::make_shared<const quant::Reader>(path);
  ModelWeights w;
  w.cfg = GgufConfigReader(*file).read();
  w.origin = "gguf:" + path;
  w.v_heads_tiled = true;  // SPEC 8.3: kept as the converter wrote them
  for (int i = 0; i < w.cfg.n_layers; ++i) {
    LayerWeights& L = w.layers.emplace_back();
    L.kind = w.cfg.layer_kinds[size_t(i)];
    L.moe.n_experts = w.cfg.n_experts;
  }
  // The tensor `name` checked against the shape `ne` and the types the oracle can dequantize.
  auto source = [&](const std::string& name, const std::vector<int64_t>& ne) -> std::shared_ptr<const TensorSource> {
    const quant::TensorInfo* t = file->find_tensor(name);
    if (!t) return nullptr;
    const std::vector<int64_t> have = trimmed({t->ne.begin(), t->ne.begin() + t->n_dims});
    if (have != trimmed(ne)) fail("'{}': tensor '{}' has shape {}, expected {}", path, name, ne_str(have), ne_str(ne));
    if (!gguf_can_dequantize(t->type))
      fail("'{}': tensor '{}' has type {}, which the oracle cannot dequantize", path, name, quant::type_name(t->type));
    return std::make_shared<GgufSource>(file, *t);
  };
  const int64_t E = w.cfg.n_experts, F = w.cfg.expert_ffn;
  for_each_gguf_tensor(w, [&](const GgufTensorDesc& d, WeightRef& slot) {
    if (auto s = source(d.name, d.ne)) return void(slot = whole(std::move(s)));
    if (d.optional) {  // output.weight: llama.cpp reuses token_embd
      w.cfg.tie_embeddings = true;
      return void(slot = w.embed);
    }
    // Fused experts: ffn_gate_up_exps {H, 2F, E}, each expert's F gate rows, then its F up rows.
    const bool gate = d.name.ends_with(".ffn_gate_exps.weight"), up = d.name.ends_with(".ffn_up_exps.weight");
    const std::string fused = fmt::format("blk.{}.ffn_gate_up_exps.weight", d.layer);
    if (gate || up) {
      if (auto s = source(fused, {d.ne[0], 2 * F, E}))
        return void(slot = whole(row_blocks(fused + (gate ? "[gate]" : "[up]"), s, E, F, 2 * F, gate ? 0 : F)));
    }
    fail("'{}': missing tensor '{}'", path, d.name);
  });
  return w;
}

}  // namespace hl
