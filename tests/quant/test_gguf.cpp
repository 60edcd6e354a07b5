// GGUF: write -> read round trips (every metadata type, every supported tensor type, alignment) and rejection of
// malformed files with one-line errors.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "quant/gguf.h"

using namespace hl::quant;
namespace fs = std::filesystem;

namespace {

using Bytes = std::vector<uint8_t>;

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("hl_quant_test_" + std::to_string(::getpid()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

void write_file(const std::string& path, const Bytes& b) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

Bytes random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes b(n);
  for (auto& x : b) x = uint8_t(rng());
  return b;
}

// Quantized test data of a supported type: quantize a gaussian-ish row so the bytes are realistic.
Bytes make_data(Type t, int64_t ne0, int64_t rows, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd;
  std::vector<float> x(size_t(ne0 * rows));
  for (auto& v : x) v = nd(rng);
  Bytes b(row_bytes(t, ne0) * size_t(rows));
  for (int64_t r = 0; r < rows; ++r) quantize_row(t, x.data() + r * ne0, b.data() + size_t(r) * row_bytes(t, ne0), ne0);
  return b;
}

void set_all_metadata(Metadata& md) {
  md.set("general.architecture", "qwen35moe");
  md.set("test.u8", uint8_t(200));
  md.set("test.i8", int8_t(-100));
  md.set("test.u16", uint16_t(65535));
  md.set("test.i16", int16_t(-32768));
  md.set("test.u32", uint32_t(4000000000u));
  md.set("test.i32", int32_t(-2000000000));
  md.set("test.f32", 3.25f);
  md.set("test.bool_t", true);
  md.set("test.bool_f", false);
  md.set("test.string", std::string("h\xc3\xa9llo \"world\"\n"));
  md.set("test.empty_string", std::string());
  md.set("test.nul_string", std::string("a\0b", 3));
  md.set("test.u64", std::numeric_limits<uint64_t>::max());
  md.set("test.i64", std::numeric_limits<int64_t>::min());
  md.set("test.f64", -1.0e300);
  md.set("test.arr_u8", Value::array_of(std::vector<uint8_t>{0, 1, 255}));
  md.set("test.arr_i8", Value::array_of(std::vector<int8_t>{-128, 127}));
  md.set("test.arr_u16", Value::array_of(std::vector<uint16_t>{1, 65535}));
  md.set("test.arr_i16", Value::array_of(std::vector<int16_t>{-1, 2}));
  md.set("test.arr_u32", Value::array_of(std::vector<uint32_t>{7, 8, 9}));
  md.set("test.arr_i32", Value::array_of(std::vector<int32_t>{-7, 0, 7}));
  md.set("test.arr_f32", Value::array_of(std::vector<float>{0.5f, -0.0f, 1e30f}));
  md.set("test.arr_bool", Value::array_of(std::vector<bool>{true, false, true}));
  md.set("test.arr_str", Value::array_of(std::vector<std::string>{"<|im_start|>", "", "\xc4\xa0the"}));
  md.set("test.arr_u64", Value::array_of(std::vector<uint64_t>{0, std::numeric_limits<uint64_t>::max()}));
  md.set("test.arr_i64", Value::array_of(std::vector<int64_t>{-1, 1LL << 40}));
  md.set("test.arr_f64", Value::array_of(std::vector<double>{3.141592653589793}));
  md.set("test.arr_empty", Value::array(ValueType::INT32, {}));
  md.set("test.arr_nested",
         Value::array(ValueType::ARRAY, {Value::array_of(std::vector<int32_t>{1, 2}),
                                         Value::array_of(std::vector<std::string>{"x", "yz"}),
                                         Value::array(ValueType::ARRAY, {Value::array_of(std::vector<float>{1.5f})})}));
}

struct TensorSpec {
  std::string name;
  Type type;
  std::vector<int64_t> ne;
  Bytes data;
};

std::vector<TensorSpec> all_tensors() {
  std::vector<TensorSpec> ts;
  ts.push_back({"token_embd.weight", Type::Q4_K, {512, 3}, make_data(Type::Q4_K, 512, 3, 1)});
  ts.push_back({"output_norm.weight", Type::F32, {7}, make_data(Type::F32, 7, 1, 2)});
  ts.push_back({"blk.0.attn_qkv.weight", Type::Q6_K, {256, 2, 3}, make_data(Type::Q6_K, 256, 6, 3)});
  ts.push_back({"blk.0.ffn_down_exps.weight", Type::Q5_K, {256, 2, 1, 2}, make_data(Type::Q5_K, 256, 4, 4)});
  ts.push_back({"blk.0.q8", Type::Q8_0, {64, 5}, make_data(Type::Q8_0, 64, 5, 5)});
  ts.push_back({"blk.0.f16", Type::F16, {3, 3}, make_data(Type::F16, 3, 3, 6)});
  ts.push_back({"blk.0.bf16", Type::BF16, {5}, make_data(Type::BF16, 5, 1, 7)});
  ts.push_back({"blk.0.q4_0_raw", Type::Q4_0, {64}, random_bytes(36, 8)});  // known, not supported: bytes only
  ts.push_back({"empty", Type::F32, {0, 4}, {}});
  return ts;
}

// A writer holding every metadata type and every tensor; the q6_K tensor is streamed by a producer in chunks.
Writer full_writer(const std::vector<TensorSpec>& ts, std::optional<uint32_t> alignment = {}) {
  Writer w;
  set_all_metadata(w.metadata());
  if (alignment) w.set("general.alignment", *alignment);
  for (const auto& t : ts) {
    if (t.type == Type::Q6_K) {
      const Bytes* data = &t.data;
      w.add_tensor(t.name, t.type, t.ne, [data](const Writer::Sink& sink) {
        for (size_t o = 0; o < data->size(); o += 100) sink(data->data() + o, std::min<size_t>(100, data->size() - o));
      });
    } else {
      w.add_tensor(t.name, t.type, t.ne, t.data.data(), t.data.size());
    }
  }
  return w;
}

void check_round_trip(const Reader& r, const Writer& w, const std::vector<TensorSpec>& ts, size_t alignment) {
  CHECK(r.version() == 3);
  CHECK(r.alignment() == alignment);
  CHECK(r.data_offset() % alignment == 0);
  CHECK(r.file_size() == w.file_size());
  // metadata: same keys, same order, same values
  REQUIRE(r.metadata().size() == w.metadata().size());
  for (size_t i = 0; i < w.metadata().size(); ++i) {
    INFO(w.metadata().entries()[i].first);
    CHECK(r.metadata().entries()[i].first == w.metadata().entries()[i].first);
    CHECK(r.metadata().entries()[i].second == w.metadata().entries()[i].second);
  }
  REQUIRE(r.tensors().size() == ts.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    const TensorInfo& ti = r.tensors()[i];
    INFO(ts[i].name);
    CHECK(ti.name == ts[i].name);
    CHECK(&r.tensor(ts[i].name) == &ti);
    CHECK(ti.type == ts[i].type);
    CHECK(ti.n_dims == int(ts[i].ne.size()));
    for (size_t d = 0; d < 4; ++d) CHECK(ti.ne[d] == (d < ts[i].ne.size() ? ts[i].ne[d] : 1));
    CHECK(ti.offset % alignment == 0);
    CHECK(size_t(ti.data - r.file_data()) % alignment == 0);
    REQUIRE(ti.nbytes == ts[i].data.size());
    if (ti.nbytes) CHECK(std::memcmp(ti.data, ts[i].data.data(), ti.nbytes) == 0);
  }
}

// Runs the reader on `bytes`; requires an Error whose message is one line, names the file and contains `want`.
void require_rejected(const Bytes& bytes, const std::string& want) {
  try {
    Reader::from_bytes(bytes, "bad.gguf");
    FAIL("accepted a malformed file; expected: " << want);
  } catch (const Error& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find('\n') == std::string::npos);
    CHECK(msg.rfind("bad.gguf: ", 0) == 0);
    CHECK_THAT(msg, Catch::Contains(want));
  }
}

size_t find(const Bytes& b, const std::string& s) {
  auto it = std::search(b.begin(), b.end(), s.begin(), s.end());
  REQUIRE(it != b.end());
  return size_t(it - b.begin());
}
template <class T> void poke(Bytes& b, size_t at, T v) { std::memcpy(b.data() + at, &v, sizeof(T)); }

// A small valid file: one string key, one u32 key and two tensors, "wa" (q8_0 {64, 2}) and "wb" (f32 {4}).
Bytes small_file() {
  Writer w;
  w.set("general.name", "tiny");
  w.set("k.u32", uint32_t(5));
  const Bytes a = make_data(Type::Q8_0, 64, 2, 9), b = make_data(Type::F32, 4, 1, 10);
  w.add_tensor("wa", Type::Q8_0, {64, 2}, a.data(), a.size());
  w.add_tensor("wb", Type::F32, {4}, b.data(), b.size());
  return w.write_to_memory();
}
// Offsets in small_file(): each tensor info is {u64 len, name, u32 n_dims, i64 ne[], u32 type, u64 offset}.
struct InfoAt {
  size_t n_dims, ne0, type, offset;
};
InfoAt info_at(const Bytes& b, const std::string& name, int n_dims) {
  const size_t p = find(b, name) + name.size();
  return {p, p + 4, p + 4 + 8 * size_t(n_dims), p + 8 + 8 * size_t(n_dims)};
}

}  // namespace

TEST_CASE("quant: gguf write -> read round trip: every metadata type and tensor type", "[quant]") {
  TempDir tmp;
  const auto ts = all_tensors();
  for (std::optional<uint32_t> align : {std::optional<uint32_t>{}, std::optional<uint32_t>{64},
                                        std::optional<uint32_t>{1}, std::optional<uint32_t>{4096}}) {
    const size_t a = align ? *align : 32;
    INFO("alignment " << a);
    const Writer w = full_writer(ts, align);
    const std::string path = tmp.file("rt_" + std::to_string(a) + ".gguf");
    w.write(path);
    CHECK_FALSE(fs::exists(path + ".tmp"));
    Reader r(path);  // mmap
    CHECK(r.path() == path);
    check_round_trip(r, w, ts, a);
    // the in-memory image is the same file
    const Bytes mem = w.write_to_memory();
    REQUIRE(mem.size() == r.file_size());
    CHECK(std::memcmp(mem.data(), r.file_data(), mem.size()) == 0);
    // a moved reader keeps its data pointers valid
    Reader moved = std::move(r);
    CHECK(std::memcmp(moved.tensor("blk.0.q8").data, ts[4].data.data(), ts[4].data.size()) == 0);
  }
}

TEST_CASE("quant: gguf typed metadata accessors", "[quant]") {
  const auto ts = all_tensors();
  const Reader r = Reader::from_bytes(full_writer(ts).write_to_memory(), "acc.gguf");
  const Metadata& md = r.metadata();
  CHECK(md.get_string("general.architecture") == "qwen35moe");
  CHECK(md.get_u8("test.u8") == 200);
  CHECK(md.get_i8("test.i8") == -100);
  CHECK(md.get_u16("test.u16") == 65535);
  CHECK(md.get_i16("test.i16") == -32768);
  CHECK(md.get_u32("test.u32") == 4000000000u);
  CHECK(md.get_i32("test.i32") == -2000000000);
  CHECK(md.get_f32("test.f32") == 3.25f);
  CHECK(md.get_bool("test.bool_t"));
  CHECK_FALSE(md.get_bool("test.bool_f"));
  CHECK(md.get_string("test.nul_string") == std::string("a\0b", 3));
  CHECK(md.get_u64("test.u64") == std::numeric_limits<uint64_t>::max());
  CHECK(md.get_i64("test.i64") == std::numeric_limits<int64_t>::min());
  CHECK(md.get_f64("test.f64") == -1.0e300);
  CHECK(md.get_array_of<std::string>("test.arr_str") == std::vector<std::string>{"<|im_start|>", "", "\xc4\xa0the"});
  CHECK(md.get_array_of<float>("test.arr_f32")[2] == 1e30f);
  CHECK(md.get_array_of<bool>("test.arr_bool") == std::vector<bool>{true, false, true});
  CHECK(md.get_array_of<int32_t>("test.arr_empty").empty());
  const Array& nested = md.get_array("test.arr_nested");
  CHECK(nested.type == ValueType::ARRAY);
  REQUIRE(nested.items.size() == 3);
  CHECK(nested.items[1].get_if<Array>()->items[1] == Value("yz"));
  CHECK(md.get_int("test.u8") == 200);
  CHECK(md.get_int("test.i64") == std::numeric_limits<int64_t>::min());
  CHECK(md.get_int("test.u32") == 4000000000LL);
  CHECK(md.get_float("test.f32") == 3.25);
  CHECK(md.get_float("test.f64") == -1.0e300);
  CHECK(describe(md.at("test.arr_u32")) == "[u32 x 3: 7, 8, 9]");
  CHECK(describe(md.at("test.string")) == "'h\\xc3\\xa9llo \"world\"\\x0a'");

  CHECK_THROWS_WITH(md.get_u32("nope"), "acc.gguf: missing metadata key 'nope'");
  CHECK_THROWS_WITH(md.get_u32("test.f32"), "acc.gguf: metadata key 'test.f32' has type f32, expected u32");
  CHECK_THROWS_WITH(md.get_string("test.arr_str"), Catch::Contains("has type array, expected string"));
  CHECK_THROWS_WITH(md.get_array_of<int32_t>("test.arr_str"), Catch::Contains("is an array of string, expected an array of i32"));
  CHECK_THROWS_WITH(md.get_int("test.u64"), Catch::Contains("does not fit in int64"));
  CHECK_THROWS_WITH(md.get_int("test.bool_t"), Catch::Contains("expected an integer"));
  CHECK_THROWS_WITH(md.get_float("test.i32"), Catch::Contains("expected f32 or f64"));
  CHECK_THROWS_WITH(r.tensor("missing.weight"), "acc.gguf: no tensor named 'missing.weight'");
  CHECK(r.find_tensor("missing.weight") == nullptr);
  CHECK(r.tensor("token_embd.weight").row_bytes() == 2 * 144);
  CHECK(r.tensor("token_embd.weight").n_rows() == 3);
}

TEST_CASE("quant: gguf version 2 files are read", "[quant]") {
  Bytes b = small_file();
  poke<uint32_t>(b, 4, 2);
  const Reader r = Reader::from_bytes(b);
  CHECK(r.version() == 2);
  CHECK(r.metadata().get_string("general.name") == "tiny");
  CHECK(r.tensor("wb").nbytes == 16);
}

TEST_CASE("quant: gguf writer rejects bad input", "[quant]") {
  Writer w;
  const Bytes d(34 * 2);
  w.add_tensor("a", Type::Q8_0, {64}, d.data(), d.size());
  CHECK_THROWS_WITH(w.add_tensor("a", Type::Q8_0, {64}, d.data(), d.size()), Catch::Contains("duplicate tensor name 'a'"));
  CHECK_THROWS_WITH(w.add_tensor("b", Type::Q8_0, {63}, d.data(), d.size()), Catch::Contains("not a multiple of the q8_0 block size 32"));
  CHECK_THROWS_WITH(w.add_tensor("c", Type::Q8_0, {64}, d.data(), 10), Catch::Contains("has 10 bytes of data, expected 68"));
  CHECK_THROWS_WITH(w.add_tensor("e", Type::F32, {1, 1, 1, 1, 1}, d.data(), 4), Catch::Contains("n_dims 5"));
  CHECK_THROWS_WITH(w.add_tensor(std::string(64, 'x'), Type::F32, {1}, d.data(), 4), Catch::Contains("1 to 63 bytes"));
  CHECK_THROWS_WITH(w.add_tensor("f", Type::F32, {int64_t(1) << 40, int64_t(1) << 40}, d.data(), 4), Catch::Contains("overflow"));
  w.add_tensor("short", Type::F32, {4}, [](const Writer::Sink& s) { s("abc", 3); });
  CHECK_THROWS_WITH(w.write_to_memory(), Catch::Contains("producer wrote 3 bytes, expected 16"));
  Writer w2;
  w2.set("general.alignment", uint64_t(64));
  CHECK_THROWS_WITH(w2.write_to_memory(), Catch::Contains("general.alignment must be a u32 power of two"));
  w2.set("general.alignment", uint32_t(48));
  CHECK_THROWS_AS(w2.write_to_memory(), Error);
  Writer w3;
  w3.set("bad.array", Value::array(ValueType::INT32, {Value(int32_t(1)), Value(2.0f)}));
  CHECK_THROWS_WITH(w3.write_to_memory(), Catch::Contains("array element 1 has type f32, expected i32"));
  // a failed write leaves no file behind
  TempDir tmp;
  CHECK_THROWS_AS(w.write(tmp.file("x.gguf")), Error);
  CHECK_FALSE(fs::exists(tmp.file("x.gguf")));
  CHECK_FALSE(fs::exists(tmp.file("x.gguf.tmp")));
}

TEST_CASE("quant: gguf malformed headers are rejected with one-line errors", "[quant]") {
  const Bytes good = small_file();
  REQUIRE_NOTHROW(Reader::from_bytes(good));
  const InfoAt wa = info_at(good, "wa", 2), wb = info_at(good, "wb", 1);

  {  // wrong magic
    Bytes b = good;
    b[0] = 'X';
    require_rejected(b, "bad magic 'XGUF'");
  }
  for (uint32_t v : {0u, 1u, 4u, 0x03000000u}) {  // bad versions (the last one byte-swapped)
    Bytes b = good;
    poke<uint32_t>(b, 4, v);
    require_rejected(b, "unsupported version " + std::to_string(v));
  }
  {  // string length beyond the end of the file (the first key's length)
    Bytes b = good;
    poke<uint64_t>(b, 24, uint64_t(1) << 40);
    require_rejected(b, "runs beyond the end of the file");
  }
  {  // string value length beyond the end
    Bytes b = good;
    poke<uint64_t>(b, find(b, "tiny") - 8, uint64_t(-1));
    require_rejected(b, "runs beyond the end of the file");
  }
  {  // impossible metadata / tensor counts
    Bytes b = good;
    poke<uint64_t>(b, 16, uint64_t(1) << 60);
    require_rejected(b, "metadata entries cannot fit");
    b = good;
    poke<uint64_t>(b, 8, uint64_t(1) << 60);
    require_rejected(b, "tensor infos cannot fit");
  }
  {  // unknown metadata value type
    Bytes b = good;
    poke<uint32_t>(b, find(b, "k.u32") + 5, 13);
    require_rejected(b, "unknown metadata value type 13");
  }
  {  // tensor data offset beyond the file
    Bytes b = good;
    poke<uint64_t>(b, wb.offset, uint64_t(1) << 20);
    require_rejected(b, "tensor 'wb': data at offset 1048576 + 16 bytes lies beyond the end of the file");
    poke<uint64_t>(b, wb.offset, uint64_t(-32));  // overflowing offset
    require_rejected(b, "beyond the end of the file");
  }
  {  // misaligned offset
    Bytes b = good;
    poke<uint64_t>(b, wb.offset, 128 + 4);
    require_rejected(b, "misaligned");
  }
  for (uint32_t id : {4u, 31u, 99u, 0xffffffffu}) {  // unknown ggml type id
    Bytes b = good;
    poke<uint32_t>(b, wa.type, id);
    require_rejected(b, "tensor 'wa' has unknown ggml type id " + std::to_string(id));
  }
  {  // n_dims 5
    Bytes b = good;
    poke<uint32_t>(b, wa.n_dims, 5);
    require_rejected(b, "tensor 'wa' has n_dims 5 > 4");
  }
  {  // element count overflow
    Bytes b = good;
    poke<int64_t>(b, wa.ne0, int64_t(1) << 40);
    poke<int64_t>(b, wa.ne0 + 8, int64_t(1) << 40);
    require_rejected(b, "overflow in element count");
    poke<int64_t>(b, wa.ne0, -64);
    require_rejected(b, "negative dimension");
  }
  {  // row not a multiple of the block size
    Bytes b = good;
    poke<int64_t>(b, wa.ne0, 48);
    require_rejected(b, "ne[0] = 48 is not a multiple of the q8_0 block size 32");
  }
  {  // duplicate tensor name / metadata key
    Bytes b = good;
    b[find(b, "wb") + 1] = 'a';
    require_rejected(b, "duplicate tensor name 'wa'");
    Writer w;
    w.set("dup", uint32_t(1));
    w.set("dux", uint32_t(2));
    Bytes d = w.write_to_memory();
    d[find(d, "dux") + 2] = 'p';
    require_rejected(d, "duplicate metadata key 'dup'");
  }
  {  // bad alignment values
    Writer w;
    w.set("general.alignment", uint32_t(64));
    Bytes b = w.write_to_memory();
    poke<uint32_t>(b, find(b, "general.alignment") + 17 + 4, 48);
    require_rejected(b, "general.alignment 48 is not a power of two");
    poke<uint32_t>(b, find(b, "general.alignment") + 17, 5);  // type i32
    require_rejected(b, "general.alignment has type i32, expected u32");
  }
  {  // invalid bool byte
    Writer w;
    w.set("flag", true);
    Bytes b = w.write_to_memory();
    b[find(b, "flag") + 4 + 4] = 2;
    require_rejected(b, "invalid bool byte 2");
  }
  {  // arrays: length beyond the file, nesting too deep
    Writer w;
    w.set("arr", Value::array_of(std::vector<uint32_t>{1, 2, 3}));
    Bytes b = w.write_to_memory();
    poke<uint64_t>(b, find(b, "arr") + 3 + 4 + 4, uint64_t(1) << 62);
    require_rejected(b, "array length 4611686018427387904");
    Value v = Value::array_of(std::vector<int32_t>{1});
    for (int i = 0; i < 9; ++i) v = Value::array(ValueType::ARRAY, {v});
    Writer w2;
    w2.set("deep", v);
    require_rejected(w2.write_to_memory(), "arrays nested deeper than 8");
  }
  {  // control characters in names are escaped: the message stays on one line
    Bytes b = good;
    b[find(b, "wa") + 1] = '\n';
    poke<uint32_t>(b, wa.type, 99);
    require_rejected(b, "tensor 'w\\x0a' has unknown ggml type id 99");
  }
}

TEST_CASE("quant: gguf truncated at every byte is rejected, never read out of bounds", "[quant]") {
  const auto ts = all_tensors();
  const Bytes full = full_writer(ts).write_to_memory();
  const Reader r = Reader::from_bytes(full);
  const TensorInfo& last = r.tensors().back().nbytes ? r.tensors().back() : r.tensors()[r.tensors().size() - 2];
  const size_t end_of_data = r.data_offset() + last.offset + last.nbytes;
  // Every cut inside the header and the tensor data must be an Error (checked against the remaining bytes).
  int rejected = 0;
  for (size_t cut = 0; cut < end_of_data; cut += (cut < r.data_offset() ? 1 : 7)) {
    try {
      Reader::from_bytes(Bytes(full.begin(), full.begin() + ptrdiff_t(cut)), "cut.gguf");
      FAIL("accepted a file cut at " << cut);
    } catch (const Error& e) {
      const std::string msg = e.what();
      if (msg.find('\n') != std::string::npos || msg.rfind("cut.gguf: ", 0) != 0) FAIL("bad message: " << msg);
      ++rejected;
    }
  }
  CHECK(rejected > int(r.data_offset()));
  // Through the file path as well: empty file, header cut, missing file.
  TempDir tmp;
  write_file(tmp.file("empty.gguf"), {});
  CHECK_THROWS_WITH(Reader(tmp.file("empty.gguf")), Catch::Contains("truncated header: magic"));
  write_file(tmp.file("cut.gguf"), Bytes(full.begin(), full.begin() + 100));
  CHECK_THROWS_WITH(Reader(tmp.file("cut.gguf")), Catch::StartsWith(tmp.file("cut.gguf") + ": "));
  CHECK_THROWS_WITH(Reader(tmp.file("none.gguf")), Catch::Contains("cannot open"));
  CHECK_THROWS_WITH(Reader(tmp.path.string()), Catch::Contains("not a readable regular file"));
}

TEST_CASE("quant: gguf random corruption never crashes", "[quant]") {
  const Bytes good = small_file();
  const Reader ref = Reader::from_bytes(good);
  std::mt19937 rng(11);
  int accepted = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    Bytes b = good;
    const int flips = 1 + int(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      const size_t at = rng() % ref.data_offset();  // corrupt the header region
      b[at] = rng() % 3 == 0 ? uint8_t(0xff) : uint8_t(rng());
    }
    try {
      const Reader r = Reader::from_bytes(b);
      unsigned sum = 0;  // touch every byte the reader exposes
      for (const auto& t : r.tensors())
        for (size_t i = 0; i < t.nbytes; ++i) sum += t.data[i];
      (void)sum;
      ++accepted;
    } catch (const Error& e) {
      const std::string msg = e.what();
      if (msg.find('\n') != std::string::npos) FAIL("multi-line message: " << msg);
    }
  }
  CHECK(accepted < 3000);
}
