// Model I/O: config.json variants, safetensors parsing and its failure modes, checkpoint shape checks,
// synthetic weights, token files.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "io/safetensors.h"
#include "model/runner.h"
#include "test_util.h"

using namespace hl;
namespace fs = std::filesystem;

namespace {

std::string tmpdir(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("hybridlab-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

nlohmann::json tiny_config() {
  std::ifstream f(test::hf_tiny() + "/model/config.json");
  return nlohmann::json::parse(f);
}

void write_text(const std::string& path, const std::string& s) { std::ofstream(path, std::ios::binary) << s; }

}  // namespace

TEST_CASE("config: layer_types honoured, interval fallback, text_config nesting, rope parameters", "[io][config]") {
  auto j = tiny_config();
  ModelConfig c = ModelConfig::from_json(j);
  CHECK(c.hidden == 128);
  CHECK(c.rope_dims == 16);  // 64 * 0.25
  CHECK(c.rope_theta == 1e7);
  CHECK(c.is_full(3));
  CHECK(!c.is_full(0));

  j["layer_types"] = {"full_attention", "linear_attention", "full_attention", "linear_attention"};
  c = ModelConfig::from_json(j);
  CHECK(c.is_full(0));
  CHECK(c.is_full(2));
  CHECK(!c.is_full(3));

  j.erase("layer_types");
  j["full_attention_interval"] = 2;
  c = ModelConfig::from_json(j);
  CHECK(!c.is_full(0));
  CHECK(c.is_full(1));

  nlohmann::json wrapped = {{"model_type", "qwen3_5_moe"}, {"text_config", tiny_config()}};
  wrapped["text_config"]["rope_parameters"]["partial_rotary_factor"] = 0.5;
  wrapped["text_config"]["linear_num_value_heads"] = 6;  // 3 value heads per key head
  c = ModelConfig::from_json(wrapped);
  CHECK(c.rope_dims == 32);
  CHECK(c.lin_v_heads == 6);

  auto bad = tiny_config();
  bad["layer_types"] = {"linear_attention", "mamba", "full_attention", "full_attention"};
  CHECK_THROWS_WITH(ModelConfig::from_json(bad), Catch::Contains("unknown layer type"));
  bad = tiny_config();
  bad.erase("hidden_size");
  CHECK_THROWS_WITH(ModelConfig::from_json(bad), Catch::Contains("hidden_size"));
  bad = tiny_config();
  bad["linear_num_value_heads"] = 3;
  CHECK_THROWS_WITH(ModelConfig::from_json(bad), Catch::Contains("multiple of linear_num_key_heads"));
  CHECK_THROWS_WITH(ModelConfig::preset("qwen9"), Catch::Contains("unknown preset"));
  CHECK(ModelConfig::preset("qwen36-35b-a3b").count(LayerKind::FullAttention) == 10);
}

TEST_CASE("safetensors: write/read round trip and every malformed header rejected with a message", "[io][safetensors]") {
  const std::string d = tmpdir("st");
  Mat<float> m(2, 3);
  m << 1, -2, 3.5f, 0.25f, 1e-3f, -7;
  write_safetensors(d + "/ok.safetensors",
                    {OutTensor::from_mat("a", m), OutTensor::from_mat("h", m, DType::F16), OutTensor::from_mat("b", m, DType::BF16),
                     OutTensor::from_i64("ids", {5, 7})},
                    {{"k", "v"}});
  const auto f = SafetensorsFile::open(d + "/ok.safetensors");
  CHECK(f.at("a").to_mat<float>() == m);
  CHECK(max_abs(f.at("h").to_mat<float>(), m) < 2e-3);
  CHECK(max_abs(f.at("b").to_mat<float>(), m) < 2e-2);
  CHECK(f.at("ids").read_i64() == std::vector<int64_t>{5, 7});
  CHECK(f.metadata().at("k") == "v");
  CHECK_THROWS_WITH(f.at("zz"), Catch::Contains("no tensor named 'zz'"));

  auto header_file = [&](const std::string& name, const std::string& json, size_t data_bytes) {
    std::string s(8, '\0');
    const uint64_t n = json.size();
    std::memcpy(s.data(), &n, 8);
    s += json + std::string(data_bytes, '\0');
    write_text(d + "/" + name, s);
    return d + "/" + name;
  };
  write_text(d + "/short.safetensors", "abc");
  CHECK_THROWS_WITH(SafetensorsFile::open(d + "/short.safetensors"), Catch::Contains("not a safetensors file"));
  std::string big(8, '\xff');
  write_text(d + "/big.safetensors", big + "{}");
  CHECK_THROWS_WITH(SafetensorsFile::open(d + "/big.safetensors"), Catch::Contains("runs past the end"));
  CHECK_THROWS_WITH(SafetensorsFile::open(header_file("json.safetensors", "{not json", 0)), Catch::Contains("not valid JSON"));
  CHECK_THROWS_WITH(
      SafetensorsFile::open(header_file("off.safetensors", R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8)),
      Catch::Contains("outside the data section"));
  CHECK_THROWS_WITH(
      SafetensorsFile::open(header_file("size.safetensors", R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}})", 16)),
      Catch::Contains("needs 12 bytes"));
  CHECK_THROWS_WITH(
      SafetensorsFile::open(header_file("dt.safetensors", R"({"a":{"dtype":"Q4","shape":[1],"data_offsets":[0,1]}})", 1)),
      Catch::Contains("unsupported dtype"));
  CHECK_THROWS_WITH(SafetensorsFile::open(d + "/missing.safetensors"), Catch::Contains("cannot open"));

  // A truncated copy of a real checkpoint fails cleanly, never crashes.
  std::ifstream src(test::hf_tiny() + "/model/model.safetensors", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(src)), {});
  for (size_t cut : {size_t(4), size_t(100), bytes.size() / 2, bytes.size() - 1}) {
    write_text(d + "/trunc.safetensors", bytes.substr(0, cut));
    CHECK_THROWS_AS(SafetensorsFile::open(d + "/trunc.safetensors"), Error);
  }
  fs::remove_all(d);
}

TEST_CASE("checkpoint loading: a missing or mis-shaped tensor names the tensor and both shapes", "[io][weights]") {
  const std::string d = tmpdir("ckpt");
  fs::copy_file(test::hf_tiny() + "/model/config.json", d + "/config.json");
  const auto full = SafetensorsFile::open(test::hf_tiny() + "/model/model.safetensors");
  auto rewrite = [&](const std::string& drop, const std::string& reshape) {
    std::vector<OutTensor> ts;
    for (auto& [name, v] : full.tensors()) {
      if (name == drop) continue;
      Mat<float> m = v.to_mat<float>();
      if (name == reshape) m = Mat<float>(m.rows() + 1, m.cols()).setZero();
      OutTensor t = OutTensor::from_mat(name, m);
      if (name != reshape) t.shape = v.shape;
      ts.push_back(std::move(t));
    }
    write_safetensors(d + "/model.safetensors", ts);
  };
  rewrite("model.layers.2.linear_attn.in_proj_z.weight", "");
  CHECK_THROWS_WITH(load_hf(d), Catch::Contains("missing tensor 'model.layers.2.linear_attn.in_proj_z.weight'"));
  rewrite("", "model.layers.3.self_attn.k_proj.weight");
  CHECK_THROWS_WITH(load_hf(d), Catch::Contains("'model.layers.3.self_attn.k_proj.weight' has shape [129, 128], expected [128, 128]"));
  CHECK_THROWS_WITH(load_hf(d + "/nope"), Catch::Contains("not a directory"));
  fs::remove_all(d);
}

TEST_CASE("synthetic weights: deterministic per element, any row block alone, sane scales", "[io][weights]") {
  const auto s = synthetic_source("t", 300, 64, 42, {SynthInit::Normal, 0.0f, 0.5f});
  Mat<float> all(300, 64), part(10, 64);
  s->read_rows(0, 300, all.data());
  s->read_rows(123, 10, part.data());
  CHECK(part == all.middleRows(123, 10));
  const double mean = all.mean(), sd = std::sqrt((all.array() - mean).square().mean());
  CHECK(std::abs(mean) < 0.01);
  CHECK(sd == Approx(0.5).epsilon(0.02));
  Mat<float> other(1, 64);
  synthetic_source("t", 300, 64, 43, {SynthInit::Normal, 0.0f, 0.5f})->read_rows(0, 1, other.data());
  CHECK(other != all.topRows(1));

  // A synthetic tiny model runs and is a pure function of the seed.
  const ModelWeights w = synthetic_weights(ModelConfig::preset("tiny"), 7);
  const std::vector<int32_t> ids{1, 2, 3, 4, 5, 6};
  const Mat<float> a = run_reference(w, ids, {}), b = run_reference(synthetic_weights(ModelConfig::preset("tiny"), 7), ids, {});
  CHECK(a.allFinite());
  CHECK(a == b);
}

TEST_CASE("token files: ids separated by whitespace; bad files rejected", "[io][tokens]") {
  const std::string d = tmpdir("tok");
  write_text(d + "/ok.txt", " 1 2\n3\t40 \n");
  CHECK(read_token_file(d + "/ok.txt") == std::vector<int32_t>{1, 2, 3, 40});
  write_text(d + "/empty.txt", " \n ");
  CHECK_THROWS_WITH(read_token_file(d + "/empty.txt"), Catch::Contains("holds no tokens"));
  write_text(d + "/bad.txt", "1 2x 3");
  CHECK_THROWS_WITH(read_token_file(d + "/bad.txt"), Catch::Contains("'2x'"));
  write_text(d + "/neg.txt", "1 -2");
  CHECK_THROWS_WITH(read_token_file(d + "/neg.txt"), Catch::Contains("'-2'"));
  CHECK_THROWS_WITH(read_token_file(d + "/none.txt"), Catch::Contains("cannot open"));
  const ModelWeights w = synthetic_weights(ModelConfig::preset("tiny"), 1);
  CHECK_THROWS_WITH(run_reference(w, {1, 512}, {}), Catch::Contains("outside the vocabulary"));
  fs::remove_all(d);
}
