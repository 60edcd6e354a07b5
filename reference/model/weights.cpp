#include "model/weights.h"

#include <omp.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <set>

#include "io/safetensors.h"

namespace hl {

std::string WeightRef::name() const {
  if (!src) return "(none)";
  if (row0 == 0 && rows == src->rows()) return src->name();
  return fmt::format("{}[rows {}..{})", src->name(), row0, row0 + rows);
}

WeightRef WeightRef::slice_rows(int64_t r0, int64_t n) const {
  if (r0 < 0 || n < 0 || r0 + n > rows) fail("weight '{}': row slice [{}, {}) out of {} rows", name(), r0, r0 + n, rows);
  WeightRef w = *this;
  w.row0 = row0 + r0;
  w.rows = n;
  return w;
}

void WeightRef::read_rows(int64_t r0, int64_t n, float* out) const {
  if (!src) fail("read of a missing weight");
  if (r0 < 0 || n < 0 || r0 + n > rows) fail("weight '{}': rows [{}, {}) out of {} rows", name(), r0, r0 + n, rows);
  src->read_rows(row0 + r0, n, out);
}

void TensorSource::read_raw_rows(int64_t r0, int64_t n, void* out) const {
  if (storage_type() != quant::Type::F32) fail("weight '{}': raw rows are not implemented for its source", name_);
  read_rows(r0, n, static_cast<float*>(out));  // F32 storage: the raw rows are the float rows
}

void WeightRef::read_raw_rows(int64_t r0, int64_t n, void* out) const {
  if (!src) fail("read of a missing weight");
  if (r0 < 0 || n < 0 || r0 + n > rows) fail("weight '{}': rows [{}, {}) out of {} rows", name(), r0, r0 + n, rows);
  if (transform != Transform::None) fail("weight '{}': raw rows of a transformed weight", name());
  src->read_raw_rows(row0 + r0, n, out);
}

template <class S> Mat<S> WeightRef::to_mat() const {
  Mat<float> f(rows, cols);
  read_rows(0, rows, f.data());
  Mat<S> m = f.template cast<S>();
  switch (transform) {
    case Transform::None: break;
    case Transform::PlusOne: m.array() += S(1); break;
    case Transform::NegExp: m = -m.array().exp(); break;
  }
  return m;
}

template <class S> Vec<S> WeightRef::to_vec() const {
  if (rows != 1 && cols != 1) fail("weight '{}' [{}, {}] is not a vector", name(), rows, cols);
  Mat<S> m = to_mat<S>();
  return Eigen::Map<const Vec<S>>(m.data(), m.size());
}

template Mat<float> WeightRef::to_mat<float>() const;
template Mat<double> WeightRef::to_mat<double>() const;
template Vec<float> WeightRef::to_vec<float>() const;
template Vec<double> WeightRef::to_vec<double>() const;

WeightRef whole(std::shared_ptr<const TensorSource> src, Transform t) {
  WeightRef w;
  w.rows = src->rows();
  w.cols = src->cols();
  w.src = std::move(src);
  w.transform = t;
  return w;
}

ExpertWeights MoeWeights::expert(int e) const {
  if (e < 0 || e >= n_experts) fail("expert {} of {}", e, n_experts);
  const int64_t F = experts.gate.rows / n_experts, H = experts.down.rows / n_experts;
  return {experts.gate.slice_rows(e * F, F), experts.up.slice_rows(e * F, F), experts.down.slice_rows(e * H, H)};
}

void ModelWeights::truncate_layers(int n) {
  if (n <= 0 || n > cfg.n_layers) fail("--layers {}: the model has {} layers", n, cfg.n_layers);
  layers.resize(size_t(n));
  cfg.n_layers = n;
  cfg.layer_kinds.resize(size_t(n));
}

namespace {

class HostSource final : public TensorSource {
 public:
  HostSource(std::string name, Mat<float> m) : TensorSource(std::move(name), m.rows(), m.cols()), m_(std::move(m)) {}
  void read_rows(int64_t r0, int64_t n, float* out) const override {
    std::memcpy(out, m_.data() + r0 * cols(), size_t(n * cols()) * sizeof(float));
  }

 private:
  Mat<float> m_;
};

// A safetensors tensor of any float dtype, viewed as [rows, cols] (shape flattened into two dims).
class MappedSource final : public TensorSource {
 public:
  MappedSource(TensorView v, int64_t rows, int64_t cols) : TensorSource(v.name, rows, cols), v_(std::move(v)) {}
  void read_rows(int64_t r0, int64_t n, float* out) const override { v_.read_f32(r0 * cols(), n * cols(), out); }

 private:
  TensorView v_;
};

class StackedSource final : public TensorSource {
 public:
  StackedSource(std::string name, std::vector<std::shared_ptr<const TensorSource>> parts)
      : TensorSource(std::move(name), total_rows(parts), parts.at(0)->cols()), parts_(std::move(parts)) {
    for (auto& p : parts_)
      if (p->cols() != cols()) fail("stacking '{}': '{}' has {} columns, not {}", this->name(), p->name(), p->cols(), cols());
  }
  void read_rows(int64_t r0, int64_t n, float* out) const override {
    each(r0, n, [&](const TensorSource& p, int64_t pr, int64_t len, int64_t at) { p.read_rows(pr, len, out + at * cols()); });
  }
  quant::Type storage_type() const override {
    for (auto& p : parts_)
      if (p->storage_type() != parts_[0]->storage_type()) return quant::Type::F32;  // mixed: only floats
    return parts_[0]->storage_type();
  }
  void read_raw_rows(int64_t r0, int64_t n, void* out) const override {
    const size_t rb = quant::row_bytes(storage_type(), cols());
    each(r0, n, [&](const TensorSource& p, int64_t pr, int64_t len, int64_t at) {
      p.read_raw_rows(pr, len, static_cast<uint8_t*>(out) + size_t(at) * rb);
    });
  }

 private:
  // f(part, row in part, rows, output row offset) for each part overlapping rows [r0, r0 + n).
  template <class F> void each(int64_t r0, int64_t n, F&& f) const {
    int64_t base = 0;
    for (auto& p : parts_) {
      const int64_t lo = std::max(r0, base), hi = std::min(r0 + n, base + p->rows());
      if (lo < hi) f(*p, lo - base, hi - lo, lo - r0);
      base += p->rows();
    }
  }
  static int64_t total_rows(const std::vector<std::shared_ptr<const TensorSource>>& parts) {
    int64_t r = 0;
    for (auto& p : parts) r += p->rows();
    return r;
  }
  std::vector<std::shared_ptr<const TensorSource>> parts_;
};

class RowBlocksSource final : public TensorSource {
 public:
  RowBlocksSource(std::string name, std::shared_ptr<const TensorSource> src, int64_t n, int64_t block, int64_t stride,
                  int64_t offset)
      : TensorSource(std::move(name), n * block, src->cols()), src_(std::move(src)), block_(block), stride_(stride),
        offset_(offset) {
    if (offset + block > stride || (n - 1) * stride + offset + block > src_->rows())
      fail("'{}': {} blocks of {} rows with stride {} and offset {} do not fit {} rows", this->name(), n, block, stride,
           offset, src_->rows());
  }
  void read_rows(int64_t r0, int64_t n, float* out) const override {
    each(r0, n, [&](int64_t sr, int64_t len, int64_t at) { src_->read_rows(sr, len, out + at * cols()); });
  }
  quant::Type storage_type() const override { return src_->storage_type(); }
  void read_raw_rows(int64_t r0, int64_t n, void* out) const override {
    const size_t rb = quant::row_bytes(storage_type(), cols());
    each(r0, n, [&](int64_t sr, int64_t len, int64_t at) {
      src_->read_raw_rows(sr, len, static_cast<uint8_t*>(out) + size_t(at) * rb);
    });
  }

 private:
  // f(source row, rows, output row offset) for each contiguous run of rows [r0, r0 + n).
  template <class F> void each(int64_t r0, int64_t n, F&& f) const {
    for (int64_t r = r0; r < r0 + n;) {
      const int64_t b = r / block_, i = r % block_, len = std::min(block_ - i, r0 + n - r);
      f(b * stride_ + offset_ + i, len, r - r0);
      r += len;
    }
  }

  std::shared_ptr<const TensorSource> src_;
  int64_t block_, stride_, offset_;
};

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

class SyntheticSource final : public TensorSource {
 public:
  SyntheticSource(std::string name, int64_t rows, int64_t cols, uint64_t seed, SynthInit init)
      : TensorSource(name, rows, cols), key_(splitmix64(seed ^ fnv1a(name))), init_(init) {}

  // Four 16-bit uniforms per hash give an Irwin-Hall(4) variate: cheap, near-Gaussian, bounded.
  void read_rows(int64_t r0, int64_t n, float* out) const override {
    const int64_t first = r0 * cols(), count = n * cols();
#pragma omp parallel for schedule(static) if (count > (1 << 16))
    for (int64_t i = 0; i < count; ++i) {
      const uint64_t h = splitmix64(key_ + uint64_t(first + i) * 0x9e3779b97f4a7c15ull);
      if (init_.kind == SynthInit::Uniform) {
        const float u = float(h >> 40) * (1.0f / 16777216.0f);
        out[i] = init_.a + (init_.b - init_.a) * u;
      } else {
        const float s = float(h & 0xffff) + float((h >> 16) & 0xffff) + float((h >> 32) & 0xffff) + float(h >> 48);
        const float z = (s * (1.0f / 65536.0f) - 2.0f) * 1.7320508f;  // mean 0, variance 1
        out[i] = init_.a + init_.b * z;
      }
    }
  }

 private:
  uint64_t key_;
  SynthInit init_;
};

// Expected HF shapes, checked on load so a wrong checkpoint fails naming the tensor.
class HfReader {
 public:
  explicit HfReader(const std::string& dir) : dir_(dir), set_(SafetensorsSet::open_dir(dir)) {}

  bool has(const std::string& name) const { return set_.find(name) != nullptr; }

  // How many distinct N the tensor names `prefix` N "." hold (the layers a checkpoint has weights for).
  int64_t indices_present(const std::string& prefix) const {
    std::set<int64_t> seen;
    for (const std::string& n : set_.names()) {
      if (n.compare(0, prefix.size(), prefix) != 0) continue;
      const size_t dot = n.find('.', prefix.size());
      const std::string digits = n.substr(prefix.size(), dot == std::string::npos ? std::string::npos : dot - prefix.size());
      const bool number = !digits.empty() && digits.size() < 10 &&
                          std::all_of(digits.begin(), digits.end(), [](unsigned char ch) { return std::isdigit(ch) != 0; });
      if (number) seen.insert(std::stoll(digits));
    }
    return int64_t(seen.size());
  }

  // The tensor `name` with exactly `shape`, viewed as [rows, cols] = [prod(shape[:-1]), shape[-1]]
  // (or [1, n] for a vector).
  WeightRef get(const std::string& name, std::vector<int64_t> shape, Transform t = Transform::None) const {
    const TensorView* v = set_.find(name);
    if (!v) fail("'{}': missing tensor '{}'", dir_, name);
    if (v->shape != shape)
      fail("'{}': tensor '{}' has shape {}, expected {}", dir_, name, v->shape_str(), shape_str(shape));
    if (v->dtype != DType::F32 && v->dtype != DType::F16 && v->dtype != DType::BF16)
      fail("'{}': tensor '{}' has dtype {}; weights must be F32, F16 or BF16", dir_, name, dtype_name(v->dtype));
    const int64_t cols = shape.back();
    return whole(std::make_shared<MappedSource>(*v, v->numel() / cols, cols), t);
  }

 private:
  std::string dir_;
  SafetensorsSet set_;
};

}  // namespace

std::shared_ptr<const TensorSource> host_source(std::string name, Mat<float> m) {
  return std::make_shared<HostSource>(std::move(name), std::move(m));
}

std::shared_ptr<const TensorSource> stack_rows(std::string name, std::vector<std::shared_ptr<const TensorSource>> parts) {
  return std::make_shared<StackedSource>(std::move(name), std::move(parts));
}

std::shared_ptr<const TensorSource> row_blocks(std::string name, std::shared_ptr<const TensorSource> src, int64_t n,
                                               int64_t block, int64_t stride, int64_t offset) {
  return std::make_shared<RowBlocksSource>(std::move(name), std::move(src), n, block, stride, offset);
}

std::shared_ptr<const TensorSource> synthetic_source(std::string name, int64_t rows, int64_t cols, uint64_t seed,
                                                     SynthInit init) {
  return std::make_shared<SyntheticSource>(std::move(name), rows, cols, seed, init);
}

void for_each_weight(ModelWeights& w, const std::function<void(const std::string&, WeightRef&)>& f) {
  f("embed", w.embed);
  f("final_norm", w.final_norm);
  f("lm_head", w.lm_head);
  for (size_t i = 0; i < w.layers.size(); ++i) {
    LayerWeights& L = w.layers[i];
    auto v = [&](const std::string& role, WeightRef& r) {
      if (r.valid()) f(fmt::format("layers.{}.{}", i, role), r);
    };
    v("input_norm", L.input_norm), v("post_norm", L.post_norm);
    v("attn.q", L.attn.q), v("attn.k", L.attn.k), v("attn.v", L.attn.v), v("attn.o", L.attn.o);
    v("attn.q_norm", L.attn.q_norm), v("attn.k_norm", L.attn.k_norm);
    v("gdn.qkv", L.gdn.qkv), v("gdn.z", L.gdn.z), v("gdn.b", L.gdn.b), v("gdn.a", L.gdn.a);
    v("gdn.conv", L.gdn.conv), v("gdn.dt_bias", L.gdn.dt_bias), v("gdn.A", L.gdn.A), v("gdn.norm", L.gdn.norm);
    v("gdn.out", L.gdn.out);
    v("moe.router", L.moe.router);
    v("moe.experts.gate", L.moe.experts.gate), v("moe.experts.up", L.moe.experts.up);
    v("moe.experts.down", L.moe.experts.down);
    v("moe.shared.gate", L.moe.shared.gate), v("moe.shared.up", L.moe.shared.up), v("moe.shared.down", L.moe.shared.down);
    v("moe.shared_gate", L.moe.shared_gate);
  }
}

ModelWeights load_hf(const std::string& dir) {
  if (!std::filesystem::is_directory(dir)) fail("model path '{}' is not a directory", dir);
  ModelWeights w;
  w.cfg = ModelConfig::from_file(dir + "/config.json");
  w.origin = "hf:" + dir;
  const ModelConfig& c = w.cfg;
  HfReader r(dir);

  // Official checkpoints nest the trunk under model.language_model.; save_pretrained of the text model
  // writes model.*. mtp.* and model.visual.* are never read.
  const std::string root = r.has("model.language_model.embed_tokens.weight") ? "model.language_model." : "model.";
  // num_hidden_layers is a count from a file: checked against the layers the checkpoint has tensors for before any
  // per-layer structure is built.
  if (const int64_t present = r.indices_present(root + "layers."); c.n_layers > present)
    fail("'{}': config.json has num_hidden_layers {} but the checkpoint holds tensors of {} layers", dir, c.n_layers, present);
  const int64_t H = c.hidden, D = c.head_dim, F = c.expert_ffn, E = c.n_experts;
  w.embed = r.get(root + "embed_tokens.weight", {c.vocab, H});
  w.final_norm = r.get(root + "norm.weight", {H}, Transform::PlusOne);
  if (r.has("lm_head.weight")) w.lm_head = r.get("lm_head.weight", {c.vocab, H});
  else if (c.tie_embeddings) w.lm_head = w.embed;
  else fail("'{}': missing tensor 'lm_head.weight' (and tie_word_embeddings is false)", dir);

  for (int i = 0; i < c.n_layers; ++i) {
    const std::string p = fmt::format("{}layers.{}.", root, i);
    LayerWeights L;
    L.kind = c.layer_kinds[size_t(i)];
    L.input_norm = r.get(p + "input_layernorm.weight", {H}, Transform::PlusOne);
    L.post_norm = r.get(p + "post_attention_layernorm.weight", {H}, Transform::PlusOne);
    if (L.kind == LayerKind::FullAttention) {
      const std::string a = p + "self_attn.";
      L.attn.q = r.get(a + "q_proj.weight", {2 * c.n_q_heads * D, H});
      L.attn.k = r.get(a + "k_proj.weight", {c.n_kv_heads * D, H});
      L.attn.v = r.get(a + "v_proj.weight", {c.n_kv_heads * D, H});
      L.attn.o = r.get(a + "o_proj.weight", {H, c.n_q_heads * D});
      L.attn.q_norm = r.get(a + "q_norm.weight", {D}, Transform::PlusOne);
      L.attn.k_norm = r.get(a + "k_norm.weight", {D}, Transform::PlusOne);
    } else {
      const std::string a = p + "linear_attn.";
      const int64_t nv = c.lin_v_heads;
      L.gdn.qkv = r.get(a + "in_proj_qkv.weight", {c.conv_dim(), H});
      L.gdn.z = r.get(a + "in_proj_z.weight", {c.value_dim(), H});
      L.gdn.b = r.get(a + "in_proj_b.weight", {nv, H});
      L.gdn.a = r.get(a + "in_proj_a.weight", {nv, H});
      L.gdn.conv = r.get(a + "conv1d.weight", {c.conv_dim(), 1, c.conv_kernel});
      L.gdn.dt_bias = r.get(a + "dt_bias", {nv});
      L.gdn.A = r.get(a + "A_log", {nv}, Transform::NegExp);
      L.gdn.norm = r.get(a + "norm.weight", {c.lin_v_dim});
      L.gdn.out = r.get(a + "out_proj.weight", {H, c.value_dim()});
    }
    const std::string m = p + "mlp.";
    L.moe.router = r.get(m + "gate.weight", {E, H});
    L.moe.n_experts = c.n_experts;
    if (r.has(m + "experts.gate_up_proj")) {  // fused [E, 2F, H] (gate rows first) and [E, H, F]
      const auto gu = r.get(m + "experts.gate_up_proj", {E, 2 * F, H}).src;
      L.moe.experts = {whole(row_blocks(gu->name() + "[gate]", gu, E, F, 2 * F, 0)),
                       whole(row_blocks(gu->name() + "[up]", gu, E, F, 2 * F, F)),
                       r.get(m + "experts.down_proj", {E, H, F})};
    } else {
      std::vector<std::shared_ptr<const TensorSource>> g, u, d;
      for (int64_t e = 0; e < E; ++e) {
        const std::string x = fmt::format("{}experts.{}.", m, e);
        g.push_back(r.get(x + "gate_proj.weight", {F, H}).src);
        u.push_back(r.get(x + "up_proj.weight", {F, H}).src);
        d.push_back(r.get(x + "down_proj.weight", {H, F}).src);
      }
      L.moe.experts = {whole(stack_rows(m + "experts.*.gate_proj.weight", g)),
                       whole(stack_rows(m + "experts.*.up_proj.weight", u)),
                       whole(stack_rows(m + "experts.*.down_proj.weight", d))};
    }
    const int64_t Fs = c.shared_ffn;
    L.moe.shared = {r.get(m + "shared_expert.gate_proj.weight", {Fs, H}), r.get(m + "shared_expert.up_proj.weight", {Fs, H}),
                    r.get(m + "shared_expert.down_proj.weight", {H, Fs})};
    L.moe.shared_gate = r.get(m + "shared_expert_gate.weight", {1, H});
    w.layers.push_back(std::move(L));
  }
  return w;
}

ModelWeights synthetic_weights(const ModelConfig& c, uint64_t seed) {
  c.validate();
  ModelWeights w;
  w.cfg = c;
  w.origin = fmt::format("synthetic:seed={}", seed);
  // Scales follow golden/hf-tiny's randomisation: linear weights N(0, 1/in), norms near their identity,
  // conv taps N(0, 0.3^2), A_log U(-1, 1.5), dt_bias N(0, 0.5^2).
  auto lin = [&](const std::string& n, int64_t rows, int64_t cols) {
    return whole(synthetic_source(n, rows, cols, seed, {SynthInit::Normal, 0.0f, 1.0f / std::sqrt(float(cols))}));
  };
  auto make = [&](const std::string& n, int64_t rows, int64_t cols, SynthInit init, Transform t = Transform::None) {
    return whole(synthetic_source(n, rows, cols, seed, init), t);
  };
  const SynthInit zc_norm{SynthInit::Normal, 0.0f, 0.2f};  // zero-centred: gain 1 + w
  const int64_t H = c.hidden, D = c.head_dim, F = c.expert_ffn, E = c.n_experts, Fs = c.shared_ffn;
  w.embed = lin("model.embed_tokens.weight", c.vocab, H);
  w.final_norm = make("model.norm.weight", 1, H, zc_norm, Transform::PlusOne);
  w.lm_head = c.tie_embeddings ? w.embed : lin("lm_head.weight", c.vocab, H);
  for (int i = 0; i < c.n_layers; ++i) {
    const std::string p = fmt::format("model.layers.{}.", i);
    LayerWeights L;
    L.kind = c.layer_kinds[size_t(i)];
    L.input_norm = make(p + "input_layernorm.weight", 1, H, zc_norm, Transform::PlusOne);
    L.post_norm = make(p + "post_attention_layernorm.weight", 1, H, zc_norm, Transform::PlusOne);
    if (L.kind == LayerKind::FullAttention) {
      const std::string a = p + "self_attn.";
      L.attn.q = lin(a + "q_proj.weight", 2 * c.n_q_heads * D, H);
      L.attn.k = lin(a + "k_proj.weight", c.n_kv_heads * D, H);
      L.attn.v = lin(a + "v_proj.weight", c.n_kv_heads * D, H);
      L.attn.o = lin(a + "o_proj.weight", H, c.n_q_heads * D);
      L.attn.q_norm = make(a + "q_norm.weight", 1, D, zc_norm, Transform::PlusOne);
      L.attn.k_norm = make(a + "k_norm.weight", 1, D, zc_norm, Transform::PlusOne);
    } else {
      const std::string a = p + "linear_attn.";
      const int64_t nv = c.lin_v_heads;
      L.gdn.qkv = lin(a + "in_proj_qkv.weight", c.conv_dim(), H);
      L.gdn.z = lin(a + "in_proj_z.weight", c.value_dim(), H);
      L.gdn.b = lin(a + "in_proj_b.weight", nv, H);
      L.gdn.a = lin(a + "in_proj_a.weight", nv, H);
      L.gdn.conv = make(a + "conv1d.weight", c.conv_dim(), c.conv_kernel, {SynthInit::Normal, 0.0f, 0.3f});
      L.gdn.dt_bias = make(a + "dt_bias", 1, nv, {SynthInit::Normal, 0.0f, 0.5f});
      L.gdn.A = make(a + "A_log", 1, nv, {SynthInit::Uniform, -1.0f, 1.5f}, Transform::NegExp);
      L.gdn.norm = make(a + "norm.weight", 1, c.lin_v_dim, {SynthInit::Normal, 1.0f, 0.2f});
      L.gdn.out = lin(a + "out_proj.weight", H, c.value_dim());
    }
    const std::string m = p + "mlp.";
    L.moe.router = lin(m + "gate.weight", E, H);
    L.moe.n_experts = c.n_experts;
    L.moe.experts = {lin(m + "experts.gate_proj", E * F, H), lin(m + "experts.up_proj", E * F, H),
                     whole(synthetic_source(m + "experts.down_proj", E * H, F, seed,
                                            {SynthInit::Normal, 0.0f, 1.0f / std::sqrt(float(F))}))};
    L.moe.shared = {lin(m + "shared_expert.gate_proj.weight", Fs, H), lin(m + "shared_expert.up_proj.weight", Fs, H),
                    lin(m + "shared_expert.down_proj.weight", H, Fs)};
    L.moe.shared_gate = lin(m + "shared_expert_gate.weight", 1, H);
    w.layers.push_back(std::move(L));
  }
  return w;
}

}  // namespace hl
