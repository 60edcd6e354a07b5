#include "ops/registry.h"

#include "runtime/vulkan/device_profile.h"
#include "env.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace hl::gpu {

std::vector<std::string> OpDef::outputs_set(const OpArgs& ref) const {
  if (!optional_outputs) return outputs;
  std::vector<std::string> v;
  for (const auto& n : outputs)
    if (ref.t.count(n)) v.push_back(n);
  return v;
}

const Tensor& OpArgs::in(const std::string& name) const {
  auto it = t.find(name);
  if (it == t.end() || !it->second.valid()) fail("op argument '{}' is missing", name);
  return it->second;
}

Tensor& OpArgs::state(const std::string& name) {
  auto it = t.find(name);
  if (it == t.end() || !it->second.valid()) fail("op state '{}' is missing", name);
  return it->second;
}

const WeightRef& OpArgs::weight(const std::string& name) const {
  auto it = w.find(name);
  if (it == w.end() || !it->second.valid()) fail("op weight '{}' is missing", name);
  return it->second;
}

double OpArgs::param(const std::string& name) const {
  auto it = p.find(name);
  if (it == p.end()) fail("op parameter '{}' is missing", name);
  return it->second;
}

static size_t device_weight_budget(Device* dev) {
  if (const char* e = std::getenv("HYBRIDLAB_DEVICE_WEIGHT_CACHE_MB"); e && *e)
    return env_megabytes("HYBRIDLAB_DEVICE_WEIGHT_CACHE_MB", 0);
  return dev ? size_t(double(dev->info().device_local_heap) * 0.8) : 0;
}

WeightStore::WeightStore(Device* dev)
    : dev_(dev), device_(device_weight_budget(dev)), raw_(device_weight_budget(dev)), planar_(device_weight_budget(dev)),
      columns_(device_weight_budget(dev)) {}

Tensor WeightStore::host(const WeightRef& w) {
  return *host_.get(w, size_t(w.numel()) * 4, [&] { return Tensor::from(w.to_mat<float>()); });
}

Tensor WeightStore::device(const WeightRef& w) {
  if (!dev_) fail("weight '{}' is needed on a Vulkan device, but none is open", w.name());
  return *device_.get(w, size_t(w.numel()) * 4, [&] {
    const Mat<float> m = w.to_mat<float>();  // no host copy is kept
    Tensor d = Tensor::resident(*dev_, m.rows(), m.cols());
    dev_->upload(d.buffer_mut(*dev_), m.data(), d.bytes());
    return d;
  });
}

Tensor WeightStore::scratch(const std::string& key, int64_t rows, int64_t cols) {
  if (!dev_) fail("WeightStore::scratch('{}'): no Vulkan device", key);
  Tensor& t = scratch_[key];
  if (!t.valid() || t.rows() != rows || t.cols() != cols) t = Tensor::device(*dev_, rows, cols);
  return t;
}

Tensor WeightStore::constant(const std::string& key, const std::function<Tensor()>& make, const std::string& version) {
  if (!dev_) fail("WeightStore::constant('{}'): no Vulkan device", key);
  auto& [held, t] = constant_[key];
  if (!t.valid() || held != version) {
    t = make();
    t.buffer(*dev_);  // uploaded now, once
    held = version;
  }
  return t;
}

Tensor WeightStore::device_raw(const WeightRef& w) {
  if (!dev_) fail("weight '{}' is needed on a Vulkan device, but none is open", w.name());
  const size_t bytes = quant::row_bytes(w.storage_type(), w.cols) * size_t(w.rows);
  const size_t words = (bytes + 15) / 16 * 4 + 4;  // whole uvec4s plus one spare (see registry.h)
  return *raw_.get(w, words * 4, [&] {
    std::vector<uint32_t> raw(words, 0u);
    w.read_raw_rows(0, w.rows, raw.data());
    Tensor d = Tensor::resident(*dev_, 1, int64_t(words), Tensor::Type::I32);
    dev_->upload(d.buffer_mut(*dev_), raw.data(), d.bytes());
    return d;
  });
}

size_t WeightStore::planar_row_stride(const WeightRef& w) {
  return (quant::row_bytes(w.storage_type(), w.cols) + 15) / 16 * 16;
}

Tensor WeightStore::device_planar(const WeightRef& w) {
  if (!dev_) fail("weight '{}' is needed on a Vulkan device, but none is open", w.name());
  quant::planar_fields(w.storage_type());  // a block type, or the error naming it
  const size_t rb = quant::row_bytes(w.storage_type(), w.cols), stride = planar_row_stride(w);
  const size_t words = stride * size_t(w.rows) / 4 + 4;  // plus one spare uvec4 (see registry.h)
  return *planar_.get(w, words * 4, [&] {
    std::vector<uint32_t> out(words, 0u);
    auto* o = reinterpret_cast<uint8_t*>(out.data());
    // A few MiB of raw rows at a time: the whole weight is not held twice on the host.
    const int64_t step = std::max<int64_t>(1, int64_t((8u << 20) / rb));
    std::vector<uint8_t> raw(size_t(step) * rb);
    for (int64_t r0 = 0; r0 < w.rows; r0 += step) {
      const int64_t n = std::min(step, w.rows - r0);
      w.read_raw_rows(r0, n, raw.data());
      for (int64_t r = 0; r < n; ++r) quant::planar_row(w.storage_type(), raw.data() + r * rb, o + (r0 + r) * stride, w.cols);
    }
    Tensor d = Tensor::resident(*dev_, 1, int64_t(words), Tensor::Type::I32);
    dev_->upload(d.buffer_mut(*dev_), out.data(), d.bytes());
    return d;
  });
}

Tensor WeightStore::device_chunk_columns(const WeightRef& w, int64_t group) {
  if (!dev_) fail("weight '{}' is needed on a Vulkan device, but none is open", w.name());
  const quant::Type t = w.storage_type();
  if (t != quant::Type::Q4_K && t != quant::Type::Q5_K && t != quant::Type::Q6_K)
    fail("weight '{}' is {}: chunk columns take K-quant blocks", w.name(), quant::type_name(t));
  if (group < 1 || w.rows % group) fail("weight '{}' has {} rows, not whole groups of {}", w.name(), w.rows, group);
  const size_t rb = quant::row_bytes(t, w.cols), bb = quant::row_bytes(t, 256), cb = (bb + 15) / 16;
  const size_t nb = size_t(w.cols) / 256, gb = size_t(group) * nb * cb * 16;  // bytes per group
  const size_t words = gb * size_t(w.rows / group) / 4 + 4;
  const auto cached = columns_.get(w, words * 4, [&] {
    std::vector<uint32_t> out(words, 0u);
    auto* o = reinterpret_cast<uint8_t*>(out.data());
    // A group's raw rows at a time, the groups (a stack's experts: GBs in all) on every core.
    const int64_t groups = w.rows / group;
#pragma omp parallel
    {
      std::vector<uint8_t> raw(size_t(group) * rb);
#pragma omp for schedule(dynamic)
      for (int64_t gi = 0; gi < groups; ++gi) {
        w.read_raw_rows(gi * group, group, raw.data());
        uint8_t* og = o + size_t(gi) * gb;
        for (int64_t r = 0; r < group; ++r)
          for (size_t b = 0; b < nb; ++b)
            for (size_t c = 0; c < cb; ++c)
              std::memcpy(og + ((b * cb + c) * size_t(group) + size_t(r)) * 16, raw.data() + size_t(r) * rb + b * bb + c * 16,
                          std::min<size_t>(16, bb - c * 16));
      }
    }
    Tensor d = Tensor::resident(*dev_, 1, int64_t(words), Tensor::Type::I32);
    dev_->upload(d.buffer_mut(*dev_), out.data(), d.bytes());
    return std::pair{d, group};
  });
  // One copy per weight: a kernel asking for other groups would read the cached layout as its own.
  if (cached->second != group)
    fail("weight '{}' is on the device in chunk columns of {} rows; asked for groups of {}", w.name(), cached->second, group);
  return cached->first;
}

Device& VariantCtx::device() const {
  if (!dev) fail("this variant needs a Vulkan device, and none is open");
  return *dev;
}

bool Variant::takes(const OpArgs& a) const {
  for (auto& [name, w] : a.w) {
    if (quantized_weights_only && !w.quantized()) return false;
    if (!weight_types.empty() && std::find(weight_types.begin(), weight_types.end(), w.storage_type()) == weight_types.end())
      return false;
  }
  return true;
}

Variant reference_variant(std::string op, std::string summary, std::function<void(VariantCtx&, OpArgs&)> run) {
  Variant v;
  v.op = std::move(op);
  v.name = "reference";
  v.summary = std::move(summary);
  v.family_default = true;
  v.run = std::move(run);
  return v;
}

namespace {

// Kernels called without the registry (tests of a variant's stages) still find their tunables' defaults.
const bool tunables_hooked = (vk::set_tunable_source([] { Registry::get(); }), true);

void declare(const std::vector<Tunable>& ts) {
  for (auto& t : ts) vk::declare_tunable(t.key, t.value, t.per_profile);
}

}  // namespace

void Registry::add_op(OpDef def) {
  for (auto& o : ops_)
    if (o.name == def.name) fail("op '{}' registered twice", def.name);
  declare(def.tunables);
  ops_.push_back(std::move(def));
}

void Registry::add_variant(Variant v) {
  op(v.op);
  for (auto& x : variants_)
    if (x.op == v.op && x.name == v.name) fail("variant '{}' of op '{}' registered twice", v.name, v.op);
  v.family = v.name.substr(0, v.name.find(':'));
  if (v.family_default) v.status = "default";
  else if (v.status != "baseline" && v.status != "experimental")
    fail("variant '{}' of op '{}': status '{}' (baseline or experimental; family defaults are 'default')", v.name, v.op, v.status);
  v.delegates_only = v.delegate && !v.run;
  if (v.delegates_only)
    v.run = [op = v.op, delegate = v.delegate, self = v.name](VariantCtx& c, OpArgs& a) {
      const std::string to = delegate(c, a);
      if (to.empty() || to == self) fail("variant '{}' of op '{}' delegates to itself and has no kernel of its own", self, op);
      const Registry& r = Registry::get();
      r.resolve(r.variant(op, to), c, a).run(c, a);
    };
  for (auto& x : variants_)
    if (v.family_default && x.family_default && x.op == v.op && x.family == v.family)
      fail("op '{}': both '{}' and '{}' claim to be the {} default", v.op, x.name, v.name, v.family);
  declare(v.tunables);
  variants_.push_back(std::move(v));
}

const Variant& Registry::resolve(const Variant& v, VariantCtx& c, const OpArgs& a) const {
  const Variant* cur = &v;
  for (int hops = 0; cur->delegate; ++hops) {
    const std::string to = cur->delegate(c, a);
    if (to.empty() || to == cur->name) break;
    if (hops == 8) fail("op '{}': variant '{}' delegates in a cycle", v.op, v.name);
    cur = &variant(v.op, to);
  }
  return *cur;
}

std::vector<const Tunable*> Registry::tunables() const {
  std::vector<const Tunable*> r;
  for (auto& o : ops_)
    for (auto& t : o.tunables) r.push_back(&t);
  for (auto& v : variants_)
    for (auto& t : v.tunables) r.push_back(&t);
  return r;
}

const OpDef& Registry::op(const std::string& name) const {
  std::string known;
  for (auto& o : ops_) {
    if (o.name == name) return o;
    known += (known.empty() ? "" : ", ") + o.name;
  }
  fail("unknown op '{}' (ops: {})", name, known);
}

const Variant& Registry::variant(const std::string& op_name, const std::string& name) const {
  op(op_name);
  std::string known;
  for (auto& v : variants_) {
    if (v.op != op_name) continue;
    if (v.name == name) return v;
    known += (known.empty() ? "" : ", ") + v.name;
  }
  if (auto* d = family_default(op_name, name)) return *d;
  fail("unknown variant '{}' of op '{}' (variants: {})", name, op_name, known);
}

const Variant* Registry::family_default(const std::string& op_name, const std::string& family) const {
  for (auto& v : variants_)
    if (v.op == op_name && v.family == family && (v.family_default || v.name == family)) return &v;
  return nullptr;
}

std::vector<const Variant*> Registry::variants(const std::string& op_name) const {
  std::vector<const Variant*> r;
  for (auto& v : variants_)
    if (v.op == op_name) r.push_back(&v);
  return r;
}

std::string Registry::availability(const Variant& v, const Device* dev) const {
  if (!v.needs_device) return "";
  if (!dev) return "no Vulkan device is open";
  return v.unavailable ? v.unavailable(*dev) : "";
}

}  // namespace hl::gpu
