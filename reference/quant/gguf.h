// GGUF v3 (and v2) reader and writer.
//
// File layout (little-endian): "GGUF" u32 version, u64 n_tensors, u64 n_kv, n_kv x {string key, u32 type, value},
// n_tensors x {string name, u32 n_dims, u64 ne[n_dims] (ne0 contiguous), u32 ggml type, u64 offset}, zero padding to
// `general.alignment` (u32, default 32), then the data section; tensor offsets are relative to its start and are
// multiples of the alignment. A string is u64 length + bytes (no terminator); an array is u32 element type +
// u64 count + elements.
//
// The Reader memory-maps the file read-only and validates everything before exposing it: any malformed input is a
// one-line hl::quant::Error naming the file and the problem; no length is trusted before it is checked against the
// bytes that remain. The Writer streams header, infos and then the tensors one by one (each tensor's bytes may come
// from a callback), so a file of any size is written in bounded memory.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "quant/blocks.h"
#include "quant/error.h"

namespace hl::quant {

inline constexpr uint32_t kGgufVersion = 3;
inline constexpr size_t kGgufDefaultAlignment = 32;
inline constexpr int kGgufMaxDims = 4;

// Metadata value types; the numbers are the GGUF type ids and the indices of Value::Storage.
enum class ValueType : uint32_t {
  UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6, BOOL = 7, STRING = 8,
  ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
};
const char* value_type_name(ValueType t);  // "u8", "i8", ..., "string", "array", "f64"

struct Value;

struct Array {
  ValueType type = ValueType::UINT8;  // element type (ARRAY for nested arrays; each item has its own element type)
  std::vector<Value> items;
  bool operator==(const Array& o) const;
};

struct Value {
  using Storage = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool, std::string,
                               Array, uint64_t, int64_t, double>;
  template <class T, class V> struct alternative_of;
  template <class T, class... A>
  struct alternative_of<T, std::variant<A...>> : std::bool_constant<(std::is_same_v<T, A> || ...)> {};
  template <class T> static constexpr bool is_alternative = alternative_of<T, Storage>::value;

  Storage v;

  Value() = default;
  // Exactly one of the 13 GGUF types: no implicit int -> bool or double -> float conversions.
  template <class T>
    requires is_alternative<std::remove_cvref_t<T>>
  Value(T&& x) : v(std::forward<T>(x)) {}
  Value(const char* s) : v(std::string(s)) {}
  Value(std::string_view s) : v(std::string(s)) {}

  ValueType type() const { return static_cast<ValueType>(v.index()); }
  template <class T> const T* get_if() const { return std::get_if<T>(&v); }
  bool operator==(const Value& o) const { return v == o.v; }

  static Value array(ValueType elem, std::vector<Value> items) { return Value(Array{elem, std::move(items)}); }
  // An array of scalars or strings: T is one of the alternatives other than Array.
  template <class T> static Value array_of(const std::vector<T>& xs) {
    Array a;
    a.type = static_cast<ValueType>(Storage(T{}).index());
    a.items.reserve(xs.size());
    for (const auto& x : xs) a.items.emplace_back(x);
    return Value(std::move(a));
  }
};

// A short one-line rendering (strings quoted and escaped, arrays cut after max_items), for dumps and messages.
std::string describe(const Value& v, size_t max_items = 8);

// Ordered key -> value map. Accessors throw an Error naming the source file and the key when the key is missing or
// holds another type.
class Metadata {
 public:
  explicit Metadata(std::string source = "<gguf>") : source_(std::move(source)) {}

  void set(std::string key, Value v);  // replaces an existing key in place, else appends
  bool erase(std::string_view key);
  bool has(std::string_view key) const { return find(key) != nullptr; }
  const Value* find(std::string_view key) const;
  const Value& at(std::string_view key) const;
  size_t size() const { return entries_.size(); }
  const std::vector<std::pair<std::string, Value>>& entries() const { return entries_; }
  const std::string& source() const { return source_; }

  template <class T> const T& get(std::string_view key) const;  // T: one of Value's alternatives
  uint8_t get_u8(std::string_view k) const { return get<uint8_t>(k); }
  int8_t get_i8(std::string_view k) const { return get<int8_t>(k); }
  uint16_t get_u16(std::string_view k) const { return get<uint16_t>(k); }
  int16_t get_i16(std::string_view k) const { return get<int16_t>(k); }
  uint32_t get_u32(std::string_view k) const { return get<uint32_t>(k); }
  int32_t get_i32(std::string_view k) const { return get<int32_t>(k); }
  float get_f32(std::string_view k) const { return get<float>(k); }
  bool get_bool(std::string_view k) const { return get<bool>(k); }
  const std::string& get_string(std::string_view k) const { return get<std::string>(k); }
  const Array& get_array(std::string_view k) const { return get<Array>(k); }
  uint64_t get_u64(std::string_view k) const { return get<uint64_t>(k); }
  int64_t get_i64(std::string_view k) const { return get<int64_t>(k); }
  double get_f64(std::string_view k) const { return get<double>(k); }
  // Element type must be exactly T (e.g. get_array_of<std::string>("tokenizer.ggml.tokens")).
  template <class T> std::vector<T> get_array_of(std::string_view key) const;
  // Any integer type (u64 values above INT64_MAX are an Error); any float type.
  int64_t get_int(std::string_view key) const;
  double get_float(std::string_view key) const;

 private:
  [[noreturn]] void wrong_type(std::string_view key, ValueType have, ValueType want) const;

  std::string source_;
  std::vector<std::pair<std::string, Value>> entries_;
  std::map<std::string, size_t, std::less<>> index_;
};

struct TensorInfo {
  std::string name;
  Type type = Type::F32;
  int n_dims = 1;
  std::array<int64_t, kGgufMaxDims> ne{1, 1, 1, 1};  // ne[0] is the contiguous dimension
  uint64_t offset = 0;                                // relative to the data section
  size_t nbytes = 0;
  const uint8_t* data = nullptr;                      // into the Reader's mapping

  int64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  int64_t n_rows() const { return ne[1] * ne[2] * ne[3]; }
  size_t row_bytes() const { return hl::quant::row_bytes(type, ne[0]); }
  const uint8_t* row(int64_t i) const { return data + size_t(i) * row_bytes(); }
};

class Reader {
 public:
  explicit Reader(const std::string& path);  // memory-maps the file read-only
  // Parse an in-memory image (owned by the Reader); `name` stands in for the file name in errors.
  static Reader from_bytes(std::vector<uint8_t> bytes, std::string name = "<memory>");
  Reader(Reader&&) noexcept;
  Reader& operator=(Reader&&) noexcept;
  ~Reader();

  const std::string& path() const;
  uint32_t version() const;
  size_t alignment() const;
  size_t data_offset() const;  // file offset of the data section
  size_t file_size() const;
  const uint8_t* file_data() const;
  const Metadata& metadata() const;
  const std::vector<TensorInfo>& tensors() const;
  const TensorInfo* find_tensor(std::string_view name) const;  // nullptr if absent
  const TensorInfo& tensor(std::string_view name) const;       // Error if absent

 private:
  struct Impl;
  explicit Reader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class Writer {
 public:
  using Sink = std::function<void(const void* data, size_t n)>;
  // Must pass exactly the tensor's nbytes to the sink, in as many calls as it likes.
  using Producer = std::function<void(const Sink& sink)>;

  Writer() : metadata_("<gguf writer>") {}
  Metadata& metadata() { return metadata_; }
  const Metadata& metadata() const { return metadata_; }
  void set(std::string key, Value v) { metadata_.set(std::move(key), std::move(v)); }

  // `data` is borrowed until write(); nbytes must equal row_bytes(type, ne[0]) * ne[1] * ...
  void add_tensor(std::string name, Type type, std::vector<int64_t> ne, const void* data, size_t nbytes);
  void add_tensor(std::string name, Type type, std::vector<int64_t> ne, Producer producer);

  size_t alignment() const;  // from general.alignment (u32, power of two), else 32
  uint64_t file_size() const;
  void write(const std::string& path) const;  // writes path + ".tmp", renames on success
  std::vector<uint8_t> write_to_memory() const;
  void write_to(const Sink& out) const;

 private:
  struct Pending {
    std::string name;
    Type type;
    std::vector<int64_t> ne;
    size_t nbytes;
    Producer producer;
  };
  size_t check_tensor(const std::string& name, Type type, const std::vector<int64_t>& ne) const;
  std::vector<uint8_t> header() const;

  Metadata metadata_;
  std::vector<Pending> tensors_;
};

}  // namespace hl::quant
