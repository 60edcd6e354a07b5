#include "io/safetensors.h"

#include <dirent.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <fstream>
#include <nlohmann/json.hpp>

#include "quant/blocks.h"
#include "quant/error.h"

namespace hl {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::F64: return "F64";
    case DType::F32: return "F32";
    case DType::F16: return "F16";
    case DType::BF16: return "BF16";
    case DType::I64: return "I64";
    case DType::I32: return "I32";
    case DType::U8: return "U8";
  }
  return "?";
}

size_t dtype_size(DType t) {
  switch (t) {
    case DType::F64: case DType::I64: return 8;
    case DType::F32: case DType::I32: return 4;
    case DType::F16: case DType::BF16: return 2;
    case DType::U8: return 1;
  }
  return 0;
}

static bool parse_dtype(const std::string& s, DType* t) {
  static const std::pair<const char*, DType> names[] = {{"F64", DType::F64}, {"F32", DType::F32},
                                                        {"F16", DType::F16}, {"BF16", DType::BF16},
                                                        {"I64", DType::I64}, {"I32", DType::I32},
                                                        {"U8", DType::U8}};
  for (auto& [n, d] : names)
    if (s == n) return *t = d, true;
  return false;
}

std::string shape_str(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::string TensorView::shape_str() const { return hl::shape_str(shape); }

template <class Out>
static void convert(const TensorView& v, int64_t first, int64_t n, Out* out) {
  if (first < 0 || n < 0 || first + n > v.numel())
    fail("tensor {}: element range [{}, {}) outside its {} elements", quant::printable(v.name), first, first + n, v.numel());
  if (n == 0) return;  // an empty tensor's buffers may be null (memcpy must not see them)
  const uint8_t* p = v.data + size_t(first) * dtype_size(v.dtype);
  switch (v.dtype) {
    case DType::F32:
      if constexpr (std::is_same_v<Out, float>) std::memcpy(out, p, size_t(n) * 4);
      else for (int64_t i = 0; i < n; ++i) { float x; std::memcpy(&x, p + 4 * i, 4); out[i] = Out(x); }
      return;
    case DType::F64:
      for (int64_t i = 0; i < n; ++i) { double x; std::memcpy(&x, p + 8 * i, 8); out[i] = Out(x); }
      return;
    case DType::F16:
      for (int64_t i = 0; i < n; ++i) { uint16_t h; std::memcpy(&h, p + 2 * i, 2); out[i] = Out(quant::fp16_to_fp32(h)); }
      return;
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) { uint16_t h; std::memcpy(&h, p + 2 * i, 2); out[i] = Out(quant::bf16_to_fp32(h)); }
      return;
    default:
      fail("tensor {}: dtype {} is not a floating-point type", quant::printable(v.name), dtype_name(v.dtype));
  }
}

void TensorView::read_f32(int64_t first, int64_t n, float* out) const { convert(*this, first, n, out); }
void TensorView::read_f64(int64_t first, int64_t n, double* out) const { convert(*this, first, n, out); }

std::vector<int64_t> TensorView::read_i64() const {
  std::vector<int64_t> v(static_cast<size_t>(numel()));
  for (size_t i = 0; i < v.size(); ++i) {
    if (dtype == DType::I64) std::memcpy(&v[i], data + 8 * i, 8);
    else if (dtype == DType::I32) { int32_t x; std::memcpy(&x, data + 4 * i, 4); v[i] = x; }
    else fail("tensor {}: dtype {} is not an integer type", quant::printable(name), dtype_name(dtype));
  }
  return v;
}

template <class S> Mat<S> TensorView::to_mat(int64_t rows, int64_t cols) const {
  if (rows * cols != numel()) fail("tensor {} {} cannot be viewed as [{}, {}]", quant::printable(name), shape_str(), rows, cols);
  Mat<S> m(rows, cols);
  convert(*this, 0, numel(), m.data());
  return m;
}

template <class S> Mat<S> TensorView::to_mat() const {
  const int64_t cols = shape.empty() ? 1 : shape.back();
  return to_mat<S>(cols ? numel() / cols : 0, cols);
}

template Mat<float> TensorView::to_mat<float>(int64_t, int64_t) const;
template Mat<double> TensorView::to_mat<double>(int64_t, int64_t) const;
template Mat<float> TensorView::to_mat<float>() const;
template Mat<double> TensorView::to_mat<double>() const;

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  SafetensorsFile f;
  f.path_ = path;
  auto map = MappedFile::open(path);
  if (map->size() < 8) fail("'{}': not a safetensors file (shorter than its 8-byte header length)", path);
  uint64_t hlen = 0;
  std::memcpy(&hlen, map->data(), 8);
  if (hlen > map->size() - 8) fail("'{}': header length {} runs past the end of the file ({} bytes)", path, hlen, map->size());
  nlohmann::json j;
  // A name given twice would silently keep the last entry (JSON objects do): refused, like overlapping data below.
  std::set<std::string> names;
  std::string repeated;
  const nlohmann::json::parser_callback_t on_key = [&](int depth, nlohmann::json::parse_event_t ev, nlohmann::json& v) {
    if (ev == nlohmann::json::parse_event_t::key && depth == 1 && v.is_string() && !names.insert(v.get<std::string>()).second &&
        repeated.empty())
      repeated = v.get<std::string>();
    return true;
  };
  try {
    j = nlohmann::json::parse(map->data() + 8, map->data() + 8 + hlen, on_key);
  } catch (const nlohmann::json::exception&) {
    fail("'{}': safetensors header is not valid JSON", path);
  }
  if (!repeated.empty()) fail("'{}': tensor {} appears twice in the header", path, quant::printable(repeated));
  if (!j.is_object()) fail("'{}': safetensors header is not a JSON object", path);
  const uint8_t* base = map->data() + 8 + hlen;
  const size_t data_size = map->size() - 8 - hlen;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (it->is_object())
        for (auto m = it->begin(); m != it->end(); ++m)
          if (m->is_string()) f.metadata_[m.key()] = m->get<std::string>();
      continue;
    }
    const auto& e = *it;
    TensorView v;
    v.name = it.key();
    v.file = map;
    try {
      if (!parse_dtype(e.at("dtype").get<std::string>(), &v.dtype))
        fail("'{}': tensor {} has unsupported dtype {}", path, quant::printable(v.name), e.at("dtype").dump());
      // Non-negative integers only: nlohmann's get<int64_t>() of 1e300 is undefined behaviour.
      for (const char* key : {"shape", "data_offsets"})
        for (const auto& x : e.at(key))
          if (!x.is_number_unsigned()) fail("'{}': tensor {} has a malformed header entry", path, quant::printable(v.name));
      v.shape = e.at("shape").get<std::vector<int64_t>>();
      auto off = e.at("data_offsets").get<std::vector<uint64_t>>();
      if (off.size() != 2 || off[0] > off[1] || off[1] > data_size)
        fail("'{}': tensor {} data offsets {} lie outside the data section ({} bytes)", path, quant::printable(v.name),
             e.at("data_offsets").dump(), data_size);
      int64_t count = 1;  // numel(), checked: [2^40, 2^40] must not overflow it
      for (auto d : v.shape)
        if (d < 0 || d > (int64_t(1) << 40) || __builtin_mul_overflow(count, d, &count))
          fail("'{}': tensor {} has an invalid shape {}", path, quant::printable(v.name), v.shape_str());
      v.data = base + off[0];
      v.nbytes = off[1] - off[0];
    } catch (const nlohmann::json::exception&) {
      fail("'{}': tensor {} has a malformed header entry", path, quant::printable(v.name));
    }
    // Checked too: [2^31, 2^31] F64 needs 2^65 bytes, which would wrap to 0.
    uint64_t need = 0;
    const bool huge = __builtin_mul_overflow(uint64_t(v.numel()), dtype_size(v.dtype), &need);
    if (huge || need != v.nbytes)
      fail("'{}': tensor {} {} {} needs {} bytes but its offsets span {}", path, quant::printable(v.name), dtype_name(v.dtype),
           v.shape_str(), huge ? std::string("more than 2^64") : std::to_string(need), v.nbytes);
    f.tensors_.emplace(v.name, std::move(v));
  }
  // Every tensor owns its bytes: two whose data ranges overlap would read each other's values.
  std::vector<const TensorView*> by_start;
  for (auto& [name, v] : f.tensors_)
    if (v.nbytes) by_start.push_back(&v);
  std::sort(by_start.begin(), by_start.end(), [](const TensorView* a, const TensorView* b) { return a->data < b->data; });
  for (size_t i = 1; i < by_start.size(); ++i)
    if (by_start[i]->data < by_start[i - 1]->data + by_start[i - 1]->nbytes)
      fail("'{}': the data of tensors {} and {} overlap (offsets {} and {})", path, quant::printable(by_start[i - 1]->name),
           quant::printable(by_start[i]->name), by_start[i - 1]->data - base, by_start[i]->data - base);
  return f;
}

const TensorView* SafetensorsFile::find(const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

const TensorView& SafetensorsFile::at(const std::string& name) const {
  if (auto* v = find(name)) return *v;
  fail("'{}': no tensor named '{}'", path_, name);
}

SafetensorsSet SafetensorsSet::open_dir(const std::string& dir) {
  SafetensorsSet s;
  s.dir_ = dir;
  std::vector<std::string> files;
  const std::string index = dir + "/model.safetensors.index.json";
  if (std::ifstream in(index); in) {
    nlohmann::json j;
    const auto malformed = [&] { fail("'{}': malformed index (expected a weight_map of tensor name -> shard file)", index); };
    try {
      in >> j;
      if (!j.is_object() || !j.contains("weight_map") || !j.at("weight_map").is_object()) malformed();
      for (auto& [name, file] : j.at("weight_map").items()) files.push_back(file.get<std::string>());
    } catch (const nlohmann::json::exception&) {
      malformed();
    }
    std::sort(files.begin(), files.end());
    files.erase(std::unique(files.begin(), files.end()), files.end());
    for (auto& f : files)  // control characters too: the name ends up in one-line messages
      if (f.find('/') != std::string::npos || std::any_of(f.begin(), f.end(), [](unsigned char c) { return c < 32 || c == 127; }))
        fail("'{}': shard name {} must be a plain file name", index, quant::printable(f));
  } else {
    DIR* d = opendir(dir.c_str());
    if (!d) fail("cannot open model directory '{}'", dir);
    while (auto* e = readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 12 && n.compare(n.size() - 12, 12, ".safetensors") == 0) files.push_back(n);
    }
    closedir(d);
    std::sort(files.begin(), files.end());
    if (files.empty()) fail("'{}': no .safetensors files and no model.safetensors.index.json", dir);
  }
  for (auto& f : files) {
    auto sf = SafetensorsFile::open(dir + "/" + f);
    for (auto& [name, v] : sf.tensors())
      if (!s.tensors_.emplace(name, v).second) fail("'{}': tensor {} appears in more than one shard", dir, quant::printable(name));
  }
  return s;
}

const TensorView* SafetensorsSet::find(const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

std::vector<std::string> SafetensorsSet::names() const {
  std::vector<std::string> n;
  for (auto& [k, v] : tensors_) n.push_back(k);
  return n;
}

template <class S> OutTensor OutTensor::from_mat(const std::string& name, const Mat<S>& m, DType as) {
  OutTensor t;
  t.name = name;
  t.dtype = as;
  t.shape = {int64_t(m.rows()), int64_t(m.cols())};
  const size_t n = size_t(m.size());
  t.bytes.resize(n * dtype_size(as));
  for (size_t i = 0; i < n; ++i) {
    const S x = m.data()[i];
    switch (as) {
      case DType::F32: { float f = float(x); std::memcpy(&t.bytes[4 * i], &f, 4); break; }
      case DType::F64: { double d = double(x); std::memcpy(&t.bytes[8 * i], &d, 8); break; }
      case DType::F16: { uint16_t h = quant::fp32_to_fp16(float(x)); std::memcpy(&t.bytes[2 * i], &h, 2); break; }
      case DType::BF16: { uint16_t h = quant::fp32_to_bf16(float(x)); std::memcpy(&t.bytes[2 * i], &h, 2); break; }
      case DType::I32: { int32_t v = int32_t(x); std::memcpy(&t.bytes[4 * i], &v, 4); break; }
      case DType::I64: { int64_t v = int64_t(x); std::memcpy(&t.bytes[8 * i], &v, 8); break; }
      case DType::U8: t.bytes[i] = uint8_t(x); break;
    }
  }
  return t;
}

template OutTensor OutTensor::from_mat<float>(const std::string&, const Mat<float>&, DType);
template OutTensor OutTensor::from_mat<double>(const std::string&, const Mat<double>&, DType);
template OutTensor OutTensor::from_mat<int32_t>(const std::string&, const Mat<int32_t>&, DType);

OutTensor OutTensor::from_i64(const std::string& name, const std::vector<int64_t>& v) {
  OutTensor t;
  t.name = name;
  t.dtype = DType::I64;
  t.shape = {int64_t(v.size())};
  t.bytes.resize(v.size() * 8);
  if (!v.empty()) std::memcpy(t.bytes.data(), v.data(), v.size() * 8);
  return t;
}

void write_safetensors(const std::string& path, const std::vector<OutTensor>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  nlohmann::json h = nlohmann::json::object();
  if (!metadata.empty()) h["__metadata__"] = metadata;
  uint64_t off = 0;
  for (auto& t : tensors) {
    h[t.name] = {{"dtype", dtype_name(t.dtype)}, {"shape", t.shape}, {"data_offsets", {off, off + t.bytes.size()}}};
    off += t.bytes.size();
  }
  std::string hs = h.dump();
  hs.append((8 - hs.size() % 8) % 8, ' ');  // keep the data section 8-byte aligned
  std::ofstream f(path, std::ios::binary);
  if (!f) fail("cannot write '{}'", path);
  const uint64_t n = hs.size();
  f.write(reinterpret_cast<const char*>(&n), 8);
  f.write(hs.data(), std::streamsize(hs.size()));
  for (auto& t : tensors) f.write(reinterpret_cast<const char*>(t.bytes.data()), std::streamsize(t.bytes.size()));
  if (!f) fail("error writing '{}'", path);
}

}  // namespace hl
