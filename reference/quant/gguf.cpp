// GGUF reader (read-only mmap, every length checked before use) and streaming writer.
#include "quant/gguf.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

namespace hl::quant {

namespace {

constexpr uint32_t kMagic = 0x46554747u;  // "GGUF" read as a little-endian u32
constexpr int kMaxArrayDepth = 8;
constexpr size_t kMaxTensorName = 63;  // ggml's GGML_MAX_NAME (64) includes the terminator

constexpr const char* kValueTypeNames[] = {"u8",  "i8",  "u16",    "i16",   "u32", "i32", "f32",
                                           "bool", "string", "array", "u64", "i64", "f64"};
constexpr uint32_t kNumValueTypes = 13;

// Smallest encoding of one element of type t: bounds a count read from the file before anything is allocated.
size_t min_encoded_size(ValueType t) {
  switch (t) {
    case ValueType::UINT8: case ValueType::INT8: case ValueType::BOOL: return 1;
    case ValueType::UINT16: case ValueType::INT16: return 2;
    case ValueType::UINT32: case ValueType::INT32: case ValueType::FLOAT32: return 4;
    case ValueType::ARRAY: return 12;
    default: return 8;  // string length, u64, i64, f64
  }
}

template <class T> ValueType value_type_of() {
  return static_cast<ValueType>(Value::Storage(std::in_place_type<T>).index());
}

size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

bool is_pow2(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

// Element count and byte size of a tensor, with every overflow and format rule checked; `fail` gets the problem.
template <class Fail>
size_t tensor_nbytes(Type type, const int64_t* ne, int n_dims, const std::string& name, Fail&& fail) {
  int64_t count = 1;
  for (int d = 0; d < n_dims; ++d) {
    if (ne[d] < 0) fail(fmt::format("tensor {} has a negative dimension ne[{}] = {}", printable(name), d, ne[d]));
    if (__builtin_mul_overflow(count, ne[d], &count))
      fail(fmt::format("tensor {}: overflow in element count", printable(name)));
  }
  const int64_t bs = block_size(type);
  if (ne[0] % bs != 0)
    fail(fmt::format("tensor {}: ne[0] = {} is not a multiple of the {} block size {}", printable(name), ne[0],
                     type_name(type), bs));
  // ne[0] alone can overflow the byte count (2^62 + 8 f32 values wrapped to 32 bytes: tests/fuzz/corpus/gguf/crash-*).
  size_t nbytes = 0;
  if (__builtin_mul_overflow(size_t(ne[0] / bs), size_t(block_bytes(type)), &nbytes))
    fail(fmt::format("tensor {}: overflow in byte size", printable(name)));
  for (int d = 1; d < n_dims; ++d)
    if (__builtin_mul_overflow(nbytes, size_t(ne[d]), &nbytes))
      fail(fmt::format("tensor {}: overflow in byte size", printable(name)));
  return nbytes;
}

class Cursor {
 public:
  Cursor(const uint8_t* p, size_t size, const std::string& file) : p_(p), size_(size), file_(file) {}
  size_t pos() const { return pos_; }
  size_t left() const { return size_ - pos_; }

  [[noreturn]] void fail(const std::string& what) const { throw Error(fmt::format("{}: {}", file_, what)); }

  void need(size_t n, std::string_view what) const {
    if (n > left())
      fail(fmt::format("truncated header: {} at offset {} needs {} bytes, {} left", what, pos_, n, left()));
  }
  template <class T> T read(std::string_view what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, p_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string read_string(std::string_view what) {
    const size_t at = pos_;
    const auto n = read<uint64_t>(what);
    if (n > left())
      fail(fmt::format("{} length {} at offset {} runs beyond the end of the file ({} bytes left)", what, n, at,
                       left()));
    std::string s(reinterpret_cast<const char*>(p_ + pos_), size_t(n));
    pos_ += size_t(n);
    return s;
  }
  // Reads a u64 count of elements of at least `min_size` bytes each, refusing counts the file cannot hold.
  uint64_t read_count(std::string_view what, size_t min_size) {
    const size_t at = pos_;
    const auto n = read<uint64_t>(what);
    if (n > left() / min_size)
      fail(fmt::format("{} {} at offset {} runs beyond the end of the file ({} bytes left)", what, n, at, left()));
    return n;
  }

 private:
  const uint8_t* p_;
  size_t size_;
  size_t pos_ = 0;
  const std::string& file_;
};

ValueType read_value_type(Cursor& c, std::string_view what) {
  const auto t = c.read<uint32_t>(what);
  if (t >= kNumValueTypes) c.fail(fmt::format("{}: unknown metadata value type {}", what, t));
  return static_cast<ValueType>(t);
}

Value read_value(Cursor& c, ValueType t, const std::string& key, int depth) {
  switch (t) {
    case ValueType::UINT8: return c.read<uint8_t>(key);
    case ValueType::INT8: return c.read<int8_t>(key);
    case ValueType::UINT16: return c.read<uint16_t>(key);
    case ValueType::INT16: return c.read<int16_t>(key);
    case ValueType::UINT32: return c.read<uint32_t>(key);
    case ValueType::INT32: return c.read<int32_t>(key);
    case ValueType::FLOAT32: return c.read<float>(key);
    case ValueType::UINT64: return c.read<uint64_t>(key);
    case ValueType::INT64: return c.read<int64_t>(key);
    case ValueType::FLOAT64: return c.read<double>(key);
    case ValueType::BOOL: {
      const auto b = c.read<uint8_t>(key);
      if (b > 1) c.fail(fmt::format("metadata {}: invalid bool byte {}", key, b));
      return b == 1;
    }
    case ValueType::STRING: return c.read_string(fmt::format("metadata {} string", key));
    case ValueType::ARRAY: {
      if (depth >= kMaxArrayDepth) c.fail(fmt::format("metadata {}: arrays nested deeper than {}", key, kMaxArrayDepth));
      Array a;
      a.type = read_value_type(c, fmt::format("metadata {} array element type", key));
      const uint64_t n = c.read_count(fmt::format("metadata {} array length", key), min_encoded_size(a.type));
      a.items.reserve(size_t(n));
      for (uint64_t i = 0; i < n; ++i) a.items.push_back(read_value(c, a.type, key, depth + 1));
      return Value(std::move(a));
    }
  }
  c.fail("unreachable value type");
}

class ByteWriter {
 public:
  std::vector<uint8_t> buf;
  void put(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    buf.insert(buf.end(), b, b + n);
  }
  template <class T> void pod(T v) { put(&v, sizeof(T)); }
  void str(std::string_view s) {
    pod<uint64_t>(s.size());
    put(s.data(), s.size());
  }
  void value(const Value& v, const std::string& key) {
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, std::string>) {
            str(x);
          } else if constexpr (std::is_same_v<T, Array>) {
            pod<uint32_t>(static_cast<uint32_t>(x.type));
            pod<uint64_t>(x.items.size());
            for (size_t i = 0; i < x.items.size(); ++i) {
              if (x.items[i].type() != x.type)
                throw Error(fmt::format("<gguf writer>: metadata {}: array element {} has type {}, expected {}",
                                        printable(key), i, value_type_name(x.items[i].type()),
                                        value_type_name(x.type)));
              value(x.items[i], key);
            }
          } else if constexpr (std::is_same_v<T, bool>) {
            pod<uint8_t>(x ? 1 : 0);
          } else {
            pod<T>(x);
          }
        },
        v.v);
  }
};

}  // namespace

// ---- values and metadata -------------------------------------------------------------------------------------------

const char* value_type_name(ValueType t) {
  const auto i = static_cast<uint32_t>(t);
  return i < kNumValueTypes ? kValueTypeNames[i] : "unknown";
}

bool Array::operator==(const Array& o) const { return type == o.type && items == o.items; }

std::string describe(const Value& v, size_t max_items) {
  return std::visit(
      [&](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return printable(x, 60);
        } else if constexpr (std::is_same_v<T, Array>) {
          std::string s = fmt::format("[{} x {}:", value_type_name(x.type), x.items.size());
          for (size_t i = 0; i < x.items.size() && i < max_items; ++i)
            s += (i ? ", " : " ") + describe(x.items[i], max_items);
          return s + (x.items.size() > max_items ? ", ...]" : "]");
        } else if constexpr (std::is_same_v<T, bool>) {
          return x ? "true" : "false";
        } else if constexpr (sizeof(T) == 1) {
          return fmt::format("{}", int(x));
        } else {
          return fmt::format("{}", x);
        }
      },
      v.v);
}

void Metadata::set(std::string key, Value v) {
  if (auto it = index_.find(key); it != index_.end()) {
    entries_[it->second].second = std::move(v);
    return;
  }
  index_.emplace(key, entries_.size());
  entries_.emplace_back(std::move(key), std::move(v));
}

bool Metadata::erase(std::string_view key) {
  auto it = index_.find(key);
  if (it == index_.end()) return false;
  entries_.erase(entries_.begin() + ptrdiff_t(it->second));
  index_.clear();
  for (size_t i = 0; i < entries_.size(); ++i) index_.emplace(entries_[i].first, i);
  return true;
}

const Value* Metadata::find(std::string_view key) const {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

const Value& Metadata::at(std::string_view key) const {
  if (const Value* v = find(key)) return *v;
  throw Error(fmt::format("{}: missing metadata key {}", source_, printable(key)));
}

void Metadata::wrong_type(std::string_view key, ValueType have, ValueType want) const {
  throw Error(fmt::format("{}: metadata key {} has type {}, expected {}", source_, printable(key),
                          value_type_name(have), value_type_name(want)));
}

template <class T> const T& Metadata::get(std::string_view key) const {
  const Value& v = at(key);
  if (const T* p = v.get_if<T>()) return *p;
  wrong_type(key, v.type(), value_type_of<T>());
}

template <class T> std::vector<T> Metadata::get_array_of(std::string_view key) const {
  const Array& a = get_array(key);
  if (a.type != value_type_of<T>())
    throw Error(fmt::format("{}: metadata key {} is an array of {}, expected an array of {}", source_,
                            printable(key), value_type_name(a.type), value_type_name(value_type_of<T>())));
  std::vector<T> out;
  out.reserve(a.items.size());
  for (const Value& item : a.items) {
    const T* p = item.get_if<T>();
    if (!p) wrong_type(key, item.type(), value_type_of<T>());
    out.push_back(*p);
  }
  return out;
}

int64_t Metadata::get_int(std::string_view key) const {
  const Value& v = at(key);
  return std::visit(
      [&](const auto& x) -> int64_t {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          if constexpr (std::is_same_v<T, uint64_t>)
            if (x > uint64_t(std::numeric_limits<int64_t>::max()))
              throw Error(fmt::format("{}: metadata key {} = {} does not fit in int64", source_, printable(key), x));
          return int64_t(x);
        } else {
          throw Error(fmt::format("{}: metadata key {} has type {}, expected an integer", source_, printable(key),
                                  value_type_name(v.type())));
        }
      },
      v.v);
}

double Metadata::get_float(std::string_view key) const {
  const Value& v = at(key);
  if (const float* f = v.get_if<float>()) return *f;
  if (const double* d = v.get_if<double>()) return *d;
  throw Error(fmt::format("{}: metadata key {} has type {}, expected f32 or f64", source_, printable(key),
                          value_type_name(v.type())));
}

#define HL_QUANT_INSTANTIATE(T)                                   \
  template const T& Metadata::get<T>(std::string_view) const;     \
  template std::vector<T> Metadata::get_array_of<T>(std::string_view) const;
HL_QUANT_INSTANTIATE(uint8_t)
HL_QUANT_INSTANTIATE(int8_t)
HL_QUANT_INSTANTIATE(uint16_t)
HL_QUANT_INSTANTIATE(int16_t)
HL_QUANT_INSTANTIATE(uint32_t)
HL_QUANT_INSTANTIATE(int32_t)
HL_QUANT_INSTANTIATE(float)
HL_QUANT_INSTANTIATE(bool)
HL_QUANT_INSTANTIATE(std::string)
HL_QUANT_INSTANTIATE(uint64_t)
HL_QUANT_INSTANTIATE(int64_t)
HL_QUANT_INSTANTIATE(double)
#undef HL_QUANT_INSTANTIATE
template const Array& Metadata::get<Array>(std::string_view) const;

// ---- reader ----------------------------------------------------------------------------------------------------

struct Reader::Impl {
  std::string path;
  const uint8_t* base = nullptr;
  size_t size = 0;
  void* map = nullptr;
  std::vector<uint8_t> owned;
  uint32_t version = 0;
  size_t alignment = kGgufDefaultAlignment;
  size_t data_offset = 0;
  Metadata metadata;
  std::vector<TensorInfo> tensors;
  std::map<std::string, size_t, std::less<>> by_name;

  ~Impl() {
    if (map) ::munmap(map, size);
  }
  void parse();
};

void Reader::Impl::parse() {
  static const uint8_t kEmpty = 0;
  if (!base) base = &kEmpty;
  metadata = Metadata(path);
  Cursor c(base, size, path);

  const auto magic = c.read<uint32_t>("magic");
  if (magic != kMagic) {
    std::string m(4, '\0');
    std::memcpy(m.data(), &magic, 4);
    c.fail(fmt::format("bad magic {} (expected 'GGUF'): not a GGUF file", printable(m)));
  }
  version = c.read<uint32_t>("version");
  if (version != 2 && version != 3) {
    const uint32_t swapped = __builtin_bswap32(version);
    c.fail(fmt::format("unsupported version {} (only 2 and 3 are read{})", version,
                       (swapped == 2 || swapped == 3) ? "; this looks like a big-endian file" : ""));
  }
  const uint64_t n_tensors_raw = c.read<uint64_t>("tensor count");
  const uint64_t n_kv = c.read<uint64_t>("metadata count");
  if (n_kv > c.left() / 13)  // key length 8 + type 4 + at least 1 value byte
    c.fail(fmt::format("truncated header: {} metadata entries cannot fit in the {} bytes left", n_kv, c.left()));

  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string key = c.read_string(fmt::format("metadata key #{}", i));
    if (metadata.has(key)) c.fail(fmt::format("duplicate metadata key {}", printable(key)));
    const std::string pkey = printable(key);
    const ValueType t = read_value_type(c, fmt::format("metadata {} type", pkey));
    metadata.set(std::move(key), read_value(c, t, pkey, 0));
  }

  if (const Value* a = metadata.find("general.alignment")) {
    const uint32_t* v = a->get_if<uint32_t>();
    if (!v) c.fail(fmt::format("general.alignment has type {}, expected u32", value_type_name(a->type())));
    if (!is_pow2(*v)) c.fail(fmt::format("general.alignment {} is not a power of two", *v));
    alignment = *v;
  }

  if (n_tensors_raw > c.left() / 24)  // name length 8 + n_dims 4 + type 4 + offset 8
    c.fail(fmt::format("truncated header: {} tensor infos cannot fit in the {} bytes left", n_tensors_raw, c.left()));
  const auto n_tensors = size_t(n_tensors_raw);
  tensors.reserve(n_tensors);
  for (size_t i = 0; i < n_tensors; ++i) {
    TensorInfo t;
    t.name = c.read_string(fmt::format("tensor name #{}", i));
    const std::string pname = printable(t.name);
    const auto n_dims = c.read<uint32_t>(fmt::format("tensor {} n_dims", pname));
    if (n_dims > uint32_t(kGgufMaxDims))
      c.fail(fmt::format("tensor {} has n_dims {} > {}", pname, n_dims, kGgufMaxDims));
    t.n_dims = int(n_dims);
    for (uint32_t d = 0; d < n_dims; ++d) t.ne[d] = c.read<int64_t>(fmt::format("tensor {} ne[{}]", pname, d));
    const auto type_id = c.read<uint32_t>(fmt::format("tensor {} type", pname));
    if (!is_known_type(type_id)) c.fail(fmt::format("tensor {} has unknown ggml type id {}", pname, type_id));
    t.type = static_cast<Type>(type_id);
    t.offset = c.read<uint64_t>(fmt::format("tensor {} offset", pname));
    t.nbytes = tensor_nbytes(t.type, t.ne.data(), t.n_dims, t.name, [&](const std::string& m) { c.fail(m); });
    if (t.offset % alignment != 0)
      c.fail(fmt::format("tensor {}: data offset {} is misaligned (alignment {})", pname, t.offset, alignment));
    if (by_name.count(t.name)) c.fail(fmt::format("duplicate tensor name {}", pname));
    by_name.emplace(t.name, i);
    tensors.push_back(std::move(t));
  }

  data_offset = align_up(c.pos(), alignment);
  const size_t avail = size >= data_offset ? size - data_offset : 0;
  for (auto& t : tensors) {
    if (t.offset > avail || t.nbytes > avail - t.offset)
      c.fail(fmt::format("tensor {}: data at offset {} + {} bytes lies beyond the end of the file "
                         "(data section starts at {}, file is {} bytes)",
                         printable(t.name), t.offset, t.nbytes, data_offset, size));
    t.data = base + std::min(size, data_offset + size_t(t.offset));
  }
  // Each tensor owns its bytes (ggml lays them out one after another): overlapping ranges would alias two weights.
  std::vector<const TensorInfo*> by_offset;
  for (const auto& t : tensors)
    if (t.nbytes) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(), [](const TensorInfo* a, const TensorInfo* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i)
    if (by_offset[i]->offset < by_offset[i - 1]->offset + by_offset[i - 1]->nbytes)
      c.fail(fmt::format("the data of tensors {} and {} overlap (offsets {} and {})", printable(by_offset[i - 1]->name),
                         printable(by_offset[i]->name), by_offset[i - 1]->offset, by_offset[i]->offset));
}

Reader::Reader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Reader::Reader(const std::string& path) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const int err = errno;
    ::close(fd);
    throw Error(fmt::format("{}: not a readable regular file{}", path, err ? fmt::format(": {}", std::strerror(err)) : ""));
  }
  impl_->size = size_t(st.st_size);
  if (impl_->size > 0) {
    void* m = ::mmap(nullptr, impl_->size, PROT_READ, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw Error(fmt::format("{}: mmap failed: {}", path, std::strerror(err)));
    }
    impl_->map = m;
    impl_->base = static_cast<const uint8_t*>(m);
  }
  ::close(fd);
  impl_->parse();
}

Reader Reader::from_bytes(std::vector<uint8_t> bytes, std::string name) {
  auto impl = std::make_unique<Impl>();
  impl->path = std::move(name);
  impl->owned = std::move(bytes);
  impl->base = impl->owned.data();
  impl->size = impl->owned.size();
  impl->parse();
  return Reader(std::move(impl));
}

Reader::Reader(Reader&&) noexcept = default;
Reader& Reader::operator=(Reader&&) noexcept = default;
Reader::~Reader() = default;

const std::string& Reader::path() const { return impl_->path; }
uint32_t Reader::version() const { return impl_->version; }
size_t Reader::alignment() const { return impl_->alignment; }
size_t Reader::data_offset() const { return impl_->data_offset; }
size_t Reader::file_size() const { return impl_->size; }
const uint8_t* Reader::file_data() const { return impl_->base; }
const Metadata& Reader::metadata() const { return impl_->metadata; }
const std::vector<TensorInfo>& Reader::tensors() const { return impl_->tensors; }

const TensorInfo* Reader::find_tensor(std::string_view name) const {
  auto it = impl_->by_name.find(name);
  return it == impl_->by_name.end() ? nullptr : &impl_->tensors[it->second];
}

const TensorInfo& Reader::tensor(std::string_view name) const {
  if (const TensorInfo* t = find_tensor(name)) return *t;
  throw Error(fmt::format("{}: no tensor named {}", impl_->path, printable(name)));
}

// ---- writer ----------------------------------------------------------------------------------------------------

size_t Writer::check_tensor(const std::string& name, Type type, const std::vector<int64_t>& ne) const {
  auto fail = [](const std::string& m) { throw Error("<gguf writer>: " + m); };
  if (name.empty() || name.size() > kMaxTensorName)
    fail(fmt::format("tensor name {} must have 1 to {} bytes", printable(name), kMaxTensorName));
  if (!is_known_type(static_cast<uint32_t>(type)))
    fail(fmt::format("tensor {} has unknown ggml type id {}", printable(name), static_cast<uint32_t>(type)));
  if (ne.empty() || ne.size() > size_t(kGgufMaxDims))
    fail(fmt::format("tensor {} has n_dims {}, expected 1 to {}", printable(name), ne.size(), kGgufMaxDims));
  for (const auto& t : tensors_)
    if (t.name == name) fail(fmt::format("duplicate tensor name {}", printable(name)));
  return tensor_nbytes(type, ne.data(), int(ne.size()), name, fail);
}

void Writer::add_tensor(std::string name, Type type, std::vector<int64_t> ne, const void* data, size_t nbytes) {
  const size_t want = check_tensor(name, type, ne);
  if (nbytes != want)
    throw Error(fmt::format("<gguf writer>: tensor {} has {} bytes of data, expected {}", printable(name), nbytes,
                            want));
  tensors_.push_back({std::move(name), type, std::move(ne), want, [data, want](const Sink& s) { s(data, want); }});
}

void Writer::add_tensor(std::string name, Type type, std::vector<int64_t> ne, Producer producer) {
  const size_t want = check_tensor(name, type, ne);
  tensors_.push_back({std::move(name), type, std::move(ne), want, std::move(producer)});
}

size_t Writer::alignment() const {
  const Value* a = metadata_.find("general.alignment");
  if (!a) return kGgufDefaultAlignment;
  const uint32_t* v = a->get_if<uint32_t>();
  if (!v || !is_pow2(*v))
    throw Error(fmt::format("<gguf writer>: general.alignment must be a u32 power of two, got {} {}",
                            value_type_name(a->type()), describe(*a)));
  return *v;
}

std::vector<uint8_t> Writer::header() const {
  const size_t align = alignment();
  ByteWriter w;
  w.pod<uint32_t>(kMagic);
  w.pod<uint32_t>(kGgufVersion);
  w.pod<uint64_t>(tensors_.size());
  w.pod<uint64_t>(metadata_.size());
  for (const auto& [key, value] : metadata_.entries()) {
    w.str(key);
    w.pod<uint32_t>(static_cast<uint32_t>(value.type()));
    w.value(value, key);
  }
  uint64_t offset = 0;
  for (const auto& t : tensors_) {
    w.str(t.name);
    w.pod<uint32_t>(uint32_t(t.ne.size()));
    for (int64_t n : t.ne) w.pod<int64_t>(n);
    w.pod<uint32_t>(static_cast<uint32_t>(t.type));
    w.pod<uint64_t>(offset);
    offset += align_up(t.nbytes, align);
  }
  w.buf.resize(align_up(w.buf.size(), align), 0);
  return std::move(w.buf);
}

uint64_t Writer::file_size() const {
  uint64_t n = header().size();
  for (const auto& t : tensors_) n += align_up(t.nbytes, alignment());
  return n;
}

void Writer::write_to(const Sink& out) const {
  const size_t align = alignment();
  const std::vector<uint8_t> h = header();
  out(h.data(), h.size());
  static const uint8_t kZeros[256] = {};
  for (const auto& t : tensors_) {
    size_t got = 0;
    const Sink counted = [&](const void* p, size_t n) {
      if (n > t.nbytes - got)
        throw Error(fmt::format("<gguf writer>: tensor {}: producer wrote more than its {} bytes", printable(t.name),
                                t.nbytes));
      if (n == 0) return;
      out(p, n);
      got += n;
    };
    t.producer(counted);
    if (got != t.nbytes)
      throw Error(fmt::format("<gguf writer>: tensor {}: producer wrote {} bytes, expected {}", printable(t.name),
                              got, t.nbytes));
    for (size_t pad = align_up(t.nbytes, align) - t.nbytes; pad > 0;) {
      const size_t n = std::min(pad, sizeof(kZeros));
      out(kZeros, n);
      pad -= n;
    }
  }
}

std::vector<uint8_t> Writer::write_to_memory() const {
  std::vector<uint8_t> buf;
  write_to([&](const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    buf.insert(buf.end(), b, b + n);
  });
  return buf;
}

void Writer::write(const std::string& path) const {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw Error(fmt::format("{}: cannot create: {}", tmp, std::strerror(errno)));
  std::vector<char> buffer(size_t(1) << 20);
  std::setvbuf(f, buffer.data(), _IOFBF, buffer.size());
  try {
    write_to([&](const void* p, size_t n) {
      if (std::fwrite(p, 1, n, f) != n) throw Error(fmt::format("{}: write failed: {}", tmp, std::strerror(errno)));
    });
    if (std::fflush(f) != 0) throw Error(fmt::format("{}: write failed: {}", tmp, std::strerror(errno)));
  } catch (...) {
    std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }
  if (std::fclose(f) != 0) {
    std::remove(tmp.c_str());
    throw Error(fmt::format("{}: close failed: {}", tmp, std::strerror(errno)));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error(fmt::format("{}: cannot rename to {}: {}", tmp, path, std::strerror(errno)));
  }
}

}  // namespace hl::quant
