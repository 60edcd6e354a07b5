// Hardening (issue 8): the oracle on extreme but legal inputs, validate mode's NaN/Inf report, plan
// availability errors, and one regression test per input that made a fuzzer (tests/fuzz/) fail.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ops/vulkan_variant.h"
#include "plan/executor.h"
#include "env.h"
#include "io/safetensors.h"
#include "model/config.h"
#include "model/runner.h"
#include "ops/gated_rmsnorm/reference.h"
#include "ops/l2norm/reference.h"
#include "ops/moe_router/reference.h"
#include "ops/rmsnorm/reference.h"
#include "ops/rope/reference.h"
#include "ops/ssm_scan/reference.h"
#include "quant/gguf.h"
#include "test_util.h"

using namespace hl;
namespace fs = std::filesystem;

namespace {

std::string scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("hybridlab-hardening-" + std::to_string(::getpid()));
  fs::create_directories(d);
  return (d / name).string();
}

std::string write_bytes(const std::string& name, const std::string& bytes) {
  const std::string path = scratch(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// A safetensors file: u64 header length, the header as given, then `data` bytes of zeros.
std::string safetensors_bytes(const std::string& header, size_t data = 0) {
  std::string s(8, '\0');
  const uint64_t n = header.size();
  std::memcpy(s.data(), &n, 8);
  return s + header + std::string(data, '\0');
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

bool one_line(const std::string& m) { return !m.empty() && m.find_first_of("\r\n") == std::string::npos; }

}  // namespace

// ---- the oracle on extreme but legal inputs ------------------------------------------------------------------

TEST_CASE("hardening: norms of 1e30-sized activations stay finite and exact in f32", "[hardening][ops]") {
  const int G = 64;
  std::mt19937_64 rng(3);
  Mat<float> x = test::randn<float>(rng, 3, 2 * G);
  x.row(0) *= 1e30f;                           // both groups huge: their squares overflow f32
  x.row(1).segment(0, G) *= 3e19f;             // just past the overflow of the sum of squares
  const Vec<float> gain = Vec<float>::Constant(G, 1.5f);
  const Mat<float> y = ref::rmsnorm(x, gain, 1e-6);
  REQUIRE(y.allFinite());
  for (int r = 0; r < 3; ++r)
    for (int g = 0; g < 2 * G; g += G) {
      const Vec<double> xs = x.row(r).segment(g, G).cast<double>().transpose();
      const double inv = 1.0 / std::sqrt(xs.squaredNorm() / G + 1e-6);
      const Vec<double> want = xs * inv * 1.5;
      CHECK(rel_l2(y.row(r).segment(g, G).transpose(), want) < 1e-6);
    }
  // Ordinary rows keep the plain formula bit for bit (the goldens depend on it).
  const auto xs = x.row(2).segment(G, G);
  const float inv = 1.0f / std::sqrt(xs.squaredNorm() / float(G) + 1e-6f);
  CHECK(y.row(2).segment(G, G) == ((xs.array() * inv) * 1.5f).matrix());

  const Mat<float> l = ref::l2norm(x, G, 0.125f, 1e-6);
  REQUIRE(l.allFinite());
  CHECK(l.row(0).segment(0, G).norm() == Approx(0.125).epsilon(1e-5));
  const Mat<float> z = Mat<float>::Constant(3, 2 * G, 2.0f);
  const Mat<float> gr = ref::gated_rmsnorm(x, z, gain, 1e-6);
  REQUIRE(gr.allFinite());
  CHECK(rel_l2(gr, (y.array() * silu(2.0f)).matrix()) < 1e-6);
}

TEST_CASE("hardening: rope at position 200000 matches a double-precision hand computation", "[hardening][ops]") {
  const int D = 64, R = 16, heads = 2;
  const double theta = 1e7;
  const int64_t pos0 = 200000;
  std::mt19937_64 rng(5);
  const Mat<float> x = test::randn<float>(rng, 3, heads * D);
  const Mat<float> y = ref::rope(x, D, R, theta, pos0);
  const Mat<double> y64 = ref::rope(Mat<double>(x.cast<double>()), D, R, theta, pos0);
  Mat<double> want = x.cast<double>();
  for (int t = 0; t < 3; ++t)
    for (int h = 0; h < heads; ++h)
      for (int i = 0; i < R / 2; ++i) {
        const long double ang = (long double)(pos0 + t) * std::pow((long double)theta, -2.0L * i / R);
        const long double c = std::cos(ang), s = std::sin(ang);
        const long double a = x(t, h * D + i), b = x(t, h * D + i + R / 2);
        want(t, h * D + i) = double(a * c - b * s);
        want(t, h * D + i + R / 2) = double(b * c + a * s);
      }
  CHECK(max_abs(y, want) < 1e-6);
  CHECK(max_abs(y64, want) < 1e-9);
}

TEST_CASE("hardening: ssm_scan with decay gates near 0 (g = -80) and near 1 (g = -1e-9), both forms", "[hardening][ssm_scan]") {
  const int nk = 1, nv = 2, dk = 32, dv = 32, T = 100;
  std::mt19937_64 rng(8);
  const Mat<double> q = ref::l2norm(test::randn<double>(rng, T, nk * dk), dk, 1 / std::sqrt(double(dk)), 1e-6);
  const Mat<double> k = ref::l2norm(test::randn<double>(rng, T, nk * dk), dk, 1.0, 1e-6);
  const Mat<double> v = test::randn<double>(rng, T, nv * dv);
  const Mat<double> beta = test::randn<double>(rng, T, nv).unaryExpr([](double x) { return sigmoid(x); });
  const Mat<double> state0 = test::randn<double>(rng, nv, dk * dv, 0.1);
  for (double gval : {-80.0, -1e-9}) {
    INFO("g = " << gval);
    const Mat<double> g = Mat<double>::Constant(T, nv, gval);
    Mat<double> s64 = state0;
    const Mat<double> o64 = ref::ssm_scan_recurrent(q, k, v, beta, g, s64, nk);  // the double-precision reference
    Mat<double> sc = state0;
    const Mat<double> oc = ref::ssm_scan_chunked(q, k, v, beta, g, sc, nk, 64);
    CHECK(rel_l2(oc, o64) < 1e-10);
    CHECK(rel_l2(sc, s64) < 1e-10);
    Mat<float> sr32 = state0.cast<float>(), sc32 = state0.cast<float>();
    const Mat<float> or32 = ref::ssm_scan_recurrent<float>(q.cast<float>(), k.cast<float>(), v.cast<float>(),
                                                           beta.cast<float>(), g.cast<float>(), sr32, nk);
    const Mat<float> oc32 = ref::ssm_scan_chunked<float>(q.cast<float>(), k.cast<float>(), v.cast<float>(),
                                                         beta.cast<float>(), g.cast<float>(), sc32, nk, 64);
    REQUIRE(or32.allFinite());
    REQUIRE(oc32.allFinite());
    CHECK(rel_l2(or32, o64) < 1e-5);
    CHECK(rel_l2(oc32, o64) < 1e-5);
    CHECK(rel_l2(sr32, s64) < 1e-5);
    CHECK(rel_l2(sc32, s64) < 1e-5);
  }
}

TEST_CASE("hardening: router logits with ties pick the lower ids, in f32 and at large magnitudes", "[hardening][router]") {
  Mat<float> logits(3, 5);
  logits << 1, 3, 3, 3, 0,           // a three-way tie across the top-2 boundary
      7, 7, 7, 7, 7,                 // all equal
      1e30f, -1e30f, 1e30f, 0, 1e30f;  // huge, tied
  const auto r = ref::moe_router(logits, 2);
  CHECK(r.expert(0, 0) == 1);
  CHECK(r.expert(0, 1) == 2);
  CHECK(r.expert(1, 0) == 0);
  CHECK(r.expert(1, 1) == 1);
  CHECK(r.expert(2, 0) == 0);
  CHECK(r.expert(2, 1) == 2);
  REQUIRE(r.weight.allFinite());
  for (int t = 0; t < 3; ++t) {
    CHECK(r.weight(t, 0) == 0.5f);
    CHECK(r.weight(t, 1) == 0.5f);
  }
}

// ---- validate mode: the first NaN/Inf, named ----------------------------------------------------------------

TEST_CASE("hardening: validate mode names the op and layer of the first NaN/Inf, in the order ops ran", "[hardening][validate]") {
  const ModelWeights w = synthetic_weights(ModelConfig::preset("tiny"), 7);  // layers 0-2 gated-deltanet, 3 full
  const gpu::Registry& reg = gpu::Registry::get();
  // ssm_scan poisons one value at its third call (layer 2); add passes the reference through, so it sees the
  // NaN only downstream, although it ran (cleanly) before ssm_scan first misbehaved.
  auto calls = std::make_shared<int>(0);
  gpu::Variant nan_scan = reg.variant("ssm_scan", "reference");
  nan_scan.name = "test:nan_at_layer_2";
  nan_scan.family = "test";
  const auto scan = nan_scan.run;
  nan_scan.run = [scan, calls](gpu::VariantCtx& c, gpu::OpArgs& a) {
    scan(c, a);
    if ((*calls)++ == 2) {
      Tensor o = a.t.at("o").clone();
      o.f32_mut()(0, 0) = std::numeric_limits<float>::quiet_NaN();
      a.set("o", o);
    }
  };
  gpu::Variant add = reg.variant("add", "reference");
  add.name = "test:passthrough";
  add.family = "test";
  gpu::Plan plan;
  plan.set("ssm_scan", &nan_scan);
  plan.set("add", &add);
  gpu::PlanExecutor ex(plan, nullptr, {}, true);
  ex.set_allow_nonfinite(true);  // the report of every op's first NaN; without it the run stops at the first
  RunOptions allow;
  allow.allow_nonfinite = true;
  run_with(ex, w, {1, 2, 3, 4}, allow);
  const std::string report = ex.validation_report();
  INFO(report);
  CHECK(ex.validation().at("ssm_scan").first_nonfinite_layer == 2);
  CHECK(ex.validation().at("add").first_nonfinite_layer == 2);
  CHECK_THAT(report, Catch::Contains("first NaN/Inf: op ssm_scan at layer 2; then op add at layer 2\n"));
  CHECK(ex.validation().at("add").calls > 4);  // add ran at layers 0 and 1 before any NaN

  const gpu::Plan reference;
  gpu::PlanExecutor clean(reference, nullptr, {}, true);
  run_with(clean, w, {1, 2}, {});
  CHECK_THAT(clean.validation_report(), !Catch::Contains("NaN/Inf"));
}

TEST_CASE("hardening: non-finite values stop a run at the op that made them, named with its layer", "[hardening][validate]") {
  // One weight of NaN (layer 1's router): the oracle stops at the matmul that reads it, before the router turns the
  // NaN logits into expert ids; --allow-nonfinite lets the NaN through to the logits.
  ModelWeights w = synthetic_weights(ModelConfig::preset("tiny"), 7);
  WeightRef& router = w.layers[1].moe.router;
  router = whole(host_source("nan router", Mat<float>::Constant(router.rows, router.cols, std::nanf(""))));
  const std::vector<int32_t> tokens{1, 2, 3, 4};
  for (Precision p : {Precision::F32, Precision::F64}) {
    RunOptions o;
    o.precision = p;
    const std::string e = message_of([&] { run_reference(w, tokens, o); });
    INFO(e);
    CHECK(one_line(e));
    CHECK_THAT(e, Catch::StartsWith("non-finite values: op matmul at layer 1 (gated-deltanet) produced 32 NaN/Inf of 32 values"));
    o.allow_nonfinite = true;
    CHECK_FALSE(run_reference(w, tokens, o).allFinite());
  }
  // Validate mode (every op checked as it runs), then a plan without it (the logits checked): the same file, the
  // same stop; a variant's NaN is named with its kernel.
  const gpu::Registry& reg = gpu::Registry::get();
  gpu::Variant nan_scan = reg.variant("ssm_scan", "reference");
  nan_scan.name = "test:nan";
  nan_scan.family = "test";
  const auto scan = nan_scan.run;
  nan_scan.run = [scan](gpu::VariantCtx& c, gpu::OpArgs& a) {
    scan(c, a);
    Tensor o = a.t.at("o").clone();
    o.f32_mut()(0, 1) = std::numeric_limits<float>::infinity();
    a.set("o", o);
  };
  gpu::Plan plan;
  plan.set("ssm_scan", &nan_scan);
  const ModelWeights clean = synthetic_weights(ModelConfig::preset("tiny"), 7);
  gpu::PlanExecutor validating(plan, nullptr, {}, true);
  CHECK_THAT(message_of([&] { run_with(validating, clean, tokens, {}); }),
             Catch::Equals("non-finite values: op ssm_scan (test:nan) at layer 0 (gated-deltanet) produced 1 NaN/Inf of 512 "
                           "values in 'o'; --allow-nonfinite lets them through"));
  gpu::PlanExecutor plain(plan, nullptr);
  CHECK_THAT(message_of([&] { run_with(plain, clean, tokens, {}); }),
             Catch::StartsWith("non-finite values: the logits of positions 0..3 hold") && Catch::Contains("of 2048 values"));
}

TEST_CASE("hardening: validate names the op whose reference cannot run on the inputs a variant made", "[hardening][validate]") {
  // A router kernel that emits expert id -1 (what the Vulkan router makes of NaN logits): the reference of the next op
  // refuses it, and the message says which op and layer, not only "expert id -1".
  const gpu::Registry& reg = gpu::Registry::get();
  gpu::Variant bad_router = reg.variant("moe_router", "reference");
  bad_router.name = "test:minus_one";
  bad_router.family = "test";
  const auto route = bad_router.run;
  bad_router.run = [route](gpu::VariantCtx& c, gpu::OpArgs& a) {
    route(c, a);
    Tensor e = a.t.at("expert").clone();
    e.i32_mut()(0, 0) = -1;
    a.set("expert", e);
  };
  gpu::Variant zero_experts = reg.variant("moe_experts", "reference");
  zero_experts.name = "test:zeros";
  zero_experts.family = "test";
  zero_experts.run = [](gpu::VariantCtx&, gpu::OpArgs& a) {
    a.set("y", Tensor::from(Mat<float>::Zero(a.in("x").rows(), a.in("x").cols())));
  };
  gpu::Plan plan;
  plan.set("moe_router", &bad_router);
  plan.set("moe_experts", &zero_experts);
  gpu::PlanExecutor ex(plan, nullptr, {}, true);
  const std::string e = message_of([&] { run_with(ex, synthetic_weights(ModelConfig::preset("tiny"), 7), {1, 2}, {}); });
  INFO(e);
  CHECK(one_line(e));
  CHECK_THAT(e, Catch::StartsWith("validate: the reference of op moe_experts at layer 0 (gated-deltanet) cannot run on the "
                                  "inputs the plan's variants made") && Catch::Contains("-1"));
}

TEST_CASE("hardening: safetensors whose tensors overlap or repeat a name are refused", "[hardening][io]") {
  const std::string a = R"("a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]})";
  const std::string overlap = write_bytes("overlap.safetensors",
      safetensors_bytes("{" + a + R"(,"b":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})", 24));
  CHECK_THAT(message_of([&] { SafetensorsFile::open(overlap); }), Catch::Contains("the data of tensors 'a' and 'b' overlap"));
  const std::string twice = write_bytes("twice.safetensors",
      safetensors_bytes("{" + a + R"(,"a":{"dtype":"F32","shape":[4],"data_offsets":[16,32]}})", 32));
  CHECK_THAT(message_of([&] { SafetensorsFile::open(twice); }), Catch::Contains("tensor 'a' appears twice in the header"));
  // Adjacent, empty and unordered tensors are fine.
  const std::string fine = write_bytes("fine.safetensors", safetensors_bytes(
      R"({"b":{"dtype":"F32","shape":[4],"data_offsets":[16,32]},"e":{"dtype":"F32","shape":[0],"data_offsets":[16,16]},)" + a + "}", 32));
  CHECK(SafetensorsFile::open(fine).tensors().size() == 3);
}

TEST_CASE("hardening: GGUF tensors whose data overlap are refused", "[hardening][gguf]") {
  quant::Writer w;
  const std::vector<float> x(64, 1.0f);
  w.add_tensor("a", quant::Type::F32, {64}, x.data(), 256);
  w.add_tensor("b", quant::Type::F32, {64}, x.data(), 256);
  std::vector<uint8_t> bytes = w.write_to_memory();
  // b's info: name length 1, "b", n_dims 1, ne[0], type, then its offset, set here to a's (0).
  const std::vector<uint8_t> info{1, 0, 0, 0, 0, 0, 0, 0, 'b', 1, 0, 0, 0};
  const auto it = std::search(bytes.begin(), bytes.end(), info.begin(), info.end());
  REQUIRE(it != bytes.end());
  const size_t offset_at = size_t(it - bytes.begin()) + info.size() + 8 + 4;
  uint64_t off = 0;
  std::memcpy(&off, &bytes[offset_at], 8);
  REQUIRE(off == 256);
  std::memset(&bytes[offset_at], 0, 8);
  CHECK_THAT(message_of([&] { quant::Reader::from_bytes(bytes, "overlap.gguf"); }),
             Catch::Contains("overlap.gguf: the data of tensors 'a' and 'b' overlap"));
}

TEST_CASE("hardening: a config's layer count is bounded before its schedule is built", "[hardening][config]") {
  std::ifstream f(test::hf_tiny() + "/model/config.json");
  nlohmann::json j = nlohmann::json::parse(f);
  j.erase("layer_types");
  j["num_hidden_layers"] = 2000000000;
  CHECK_THAT(message_of([&] { ModelConfig::from_json(j); }), Catch::Contains("num_hidden_layers 2000000000 is not in [1, 65536]"));
  j["num_hidden_layers"] = 4;
  j["rope_parameters"]["partial_rotary_factor"] = 1e300;  // head_dim times it, rounded, would not fit an int
  CHECK_THAT(message_of([&] { ModelConfig::from_json(j); }), Catch::Contains("partial_rotary_factor 1e+300 is not in [0, 1]"));
  j["rope_parameters"]["partial_rotary_factor"] = 0.25;
  j["linear_num_value_heads"] = 1 << 20;
  j["linear_value_head_dim"] = 1 << 20;
  CHECK_THAT(message_of([&] { ModelConfig::from_json(j); }), Catch::Contains("overflow"));
}

// ---- plans: variants unavailable on the device --------------------------------------------------------------

TEST_CASE("hardening: a variant unavailable on the device is a one-line plan error", "[hardening][plan]") {
  const gpu::Registry& reg = gpu::Registry::get();
  // No device open: every Vulkan variant is unavailable, named ones are errors, '*' ones stay on the reference.
  std::string m = message_of([] { gpu::Plan::parse("matmul=vulkan", nullptr); });
  CHECK_THAT(m, Catch::StartsWith("--ops: variant 'vulkan:") && Catch::Contains("of op 'matmul' is unavailable: no Vulkan device is open"));
  CHECK(one_line(m));
  const gpu::Plan p = gpu::Plan::parse("*=vulkan", nullptr);
  CHECK(p.describe() == "all reference");
  CHECK_THAT(p.notes(), Catch::Contains("unavailable (no Vulkan device is open): matmul stays on reference"));
  // The mechanism a device check goes through, on the real device: a Vulkan variant (vk_op.h's wrapper adds
  // the subgroup-arithmetic check every kernel needs) whose own `unavailable` gives a reason.
  gpu::Device dev;
  gpu::Variant v = gpu::vulkan_variant("matmul", "vulkan:needs_frobnication", "test", reg.variant("matmul", "reference").run,
                                       false, false, [](const gpu::Device&) { return std::string("the device cannot frobnicate"); });
  CHECK(reg.availability(v, nullptr) == "no Vulkan device is open");
  CHECK(reg.availability(v, &dev) == "the device cannot frobnicate");
  v.unavailable = {};
  CHECK(reg.availability(v, &dev).empty());
  CHECK(dev.ctx().validation_message_count() == 0);
}

// ---- Vulkan: synchronization validation, device memory ------------------------------------------------------

TEST_CASE("hardening: synchronization validation is on under the validation layers and reports a missing barrier", "[hardening][vk]") {
  if (const char* e = std::getenv("HYBRIDLAB_SYNC_VALIDATION"); e && std::string(e) == "0") return;
  auto ctx = vk::Context::create({.validation = true});
  const vk::Pipeline p(*ctx, {.name = "runtime_selftest",
                              .spirv = vk::embedded_spirv("runtime_selftest"),
                              .buffers = 3,
                              .push_constant_bytes = 8,
                              .spec = {{0, 64u}, {1, 1.0f}}});
  vk::Buffer x(*ctx, 64 * 4, vk::BufferKind::DeviceLocal, "x"), y(*ctx, 4, vk::BufferKind::DeviceLocal, "y"),
      z(*ctx, 4, vk::BufferKind::DeviceLocal, "z"), info(*ctx, 16, vk::BufferKind::DeviceLocal, "info");
  struct Push {
    uint32_t n;
    float alpha;
  };
  // y[0] = sum(x), then z[0] = y[0]: the second dispatch reads what the first wrote.
  auto record = [&](vk::CommandList& cmd, bool barrier) {
    cmd.fill(x, 0);
    cmd.transfer_barrier();
    cmd.bind(p, {x, y, info});
    cmd.push_constants(Push{64, 1.0f});
    cmd.dispatch(1);
    if (barrier) cmd.barrier();
    cmd.bind(p, {y, z, info});
    cmd.push_constants(Push{1, 1.0f});
    cmd.dispatch(1);
  };
  vk::CommandList ok(*ctx, "with barrier"), racy(*ctx, "no barrier");
  record(ok, true);
  ok.submit_and_wait();
  INFO((ctx->validation_messages().empty() ? std::string() : ctx->validation_messages().front()));
  REQUIRE(ctx->validation_message_count() == 0);
  record(racy, false);
  racy.submit_and_wait();
  REQUIRE(ctx->validation_message_count() > 0);
  std::string all;
  for (const auto& m : ctx->validation_messages()) all += m + "\n";
  CHECK_THAT(all, Catch::Contains("SYNC-HAZARD-READ-AFTER-WRITE") && Catch::Contains("vkCmdDispatch"));
}

TEST_CASE("hardening: a device tensor larger than the device's heap is a one-line out-of-memory error", "[hardening][vk]") {
  gpu::Device dev;
  const int64_t cols = 1 << 16, rows = int64_t(dev.info().device_local_heap / (cols * 4)) + 1;
  const std::string m = message_of([&] { Tensor::device(dev, rows, cols); });
  CHECK_THAT(m, Catch::StartsWith("out of device memory: allocating") && Catch::Contains("heap has"));
  CHECK(one_line(m));
  CHECK(dev.ctx().validation_message_count() == 0);
}

// ---- regressions: inputs that made a fuzzer fail (each also lives in tests/fuzz/corpus/<name>/) ---------------

TEST_CASE("hardening: fuzz_safetensors: an empty tensor reads as an empty matrix (memcpy never sees a null buffer)", "[hardening][fuzz]") {
  // Found by fuzz_safetensors from the seed corpus: to_mat() of a [0, 4] tensor passed Eigen's null data pointer to
  // memcpy (undefined behaviour, reported by UBSan's nonnull-attribute check).
  const auto f = SafetensorsFile::open(
      write_bytes("empty.safetensors", safetensors_bytes(R"({"e":{"dtype":"F32","shape":[0,4],"data_offsets":[0,0]}})")));
  const Mat<float> m = f.at("e").to_mat<float>();
  CHECK(m.rows() == 0);
  CHECK(m.cols() == 4);
  f.at("e").read_f32(0, 0, nullptr);
  CHECK(f.at("e").to_mat<double>().size() == 0);
}

TEST_CASE("hardening: fuzz_config: integer fields must be integers within int's range", "[hardening][fuzz]") {
  // Found by fuzz_config: "vocab_size": 8.9e51 reached nlohmann's get<int>(), a float-to-int conversion out of range
  // (undefined behaviour, UBSan float-cast-overflow); 2^40 wrapped and 2.5 truncated silently.
  std::ifstream in(test::hf_tiny() + "/model/config.json");
  const nlohmann::json good = nlohmann::json::parse(in);
  for (const auto& [value, want] : std::vector<std::pair<nlohmann::json, std::string>>{
           {8.888e51, "field 'vocab_size' = 8.888e+51 is out of range"},
           {int64_t(1) << 40, "field 'vocab_size' = 1099511627776 is out of range"},
           {-(int64_t(1) << 40), "field 'vocab_size' = -1099511627776 is out of range"},
           {2.5, "field 'vocab_size' has the wrong type (expected an integer)"},
           {"512", "field 'vocab_size' has the wrong type"}}) {
    nlohmann::json j = good;
    j["vocab_size"] = value;
    const std::string m = message_of([&] { ModelConfig::from_json(j); });
    CHECK_THAT(m, Catch::Contains(want));
    CHECK(one_line(m));
  }
  nlohmann::json j = good;
  j["vocab_size"] = 512.0;  // an integral float is still the integer it spells
  CHECK(ModelConfig::from_json(j).vocab == 512);
}

TEST_CASE("hardening: safetensors headers: numbers that are not byte counts, overflowing shapes, control characters", "[hardening][fuzz]") {
  // Confirmed with fuzz_safetensors (tests/fuzz/corpus/safetensors/regress-*): floats in shape or data_offsets reached
  // nlohmann's get<int64_t>() (undefined behaviour for 1e300); [2^40, 2^40] overflowed numel() (signed overflow);
  // [2^31, 2^31] F64 needs 2^65 bytes, which wrapped to 0 and was accepted for empty offsets, so that reading it ran
  // off the mapping; a tensor name with a newline broke the one-line error.
  auto open = [](const std::string& name, const std::string& header) {
    return message_of([&] { SafetensorsFile::open(write_bytes(name, safetensors_bytes(header))); });
  };
  for (const char* entry : {R"({"a":{"dtype":"F32","shape":[1e300],"data_offsets":[0,0]}})",
                            R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[1e300,0]}})",
                            R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}})",
                            R"({"a":{"dtype":"F32","shape":[2.5],"data_offsets":[0,0]}})"}) {
    const std::string m = open("num.safetensors", entry);
    CHECK_THAT(m, Catch::Contains("tensor 'a' has a malformed header entry"));
    CHECK(one_line(m));
  }
  std::string m = open("numel.safetensors", R"({"a":{"dtype":"F32","shape":[1099511627776,1099511627776,16384],"data_offsets":[0,0]}})");
  CHECK_THAT(m, Catch::Contains("tensor 'a' has an invalid shape [1099511627776, 1099511627776, 16384]"));
  m = open("wrap.safetensors", R"({"a":{"dtype":"F64","shape":[2147483648,2147483648],"data_offsets":[0,0]}})");
  CHECK_THAT(m, Catch::Contains("F64 [2147483648, 2147483648] needs more than 2^64 bytes but its offsets span 0"));
  m = open("name.safetensors", R"({"a\nb":{"dtype":"Q4","shape":[1],"data_offsets":[0,0]}})");
  CHECK_THAT(m, Catch::Contains(R"(tensor 'a\x0ab' has unsupported dtype "Q4")"));
  CHECK(one_line(m));
}

TEST_CASE("hardening: sharded index: weight_map must be an object of plain file names", "[hardening][fuzz]") {
  const std::string dir = scratch("index");
  fs::create_directories(dir);
  auto open = [&](const std::string& index) {
    std::ofstream(dir + "/model.safetensors.index.json") << index;
    return message_of([&] { SafetensorsSet::open_dir(dir); });
  };
  // An array was iterated as if it were a map ("cannot open '<dir>/a'"): now a malformed index.
  for (const char* index : {R"({"weight_map": ["a", "b"]})", R"({"weight_map": "a"})", R"(["weight_map"])", R"({})"})
    CHECK_THAT(open(index), Catch::Contains("malformed index (expected a weight_map of tensor name -> shard file)"));
  // A shard name with a newline ended up in the "cannot open" message.
  const std::string m = open(R"({"weight_map": {"x": "a\nb.safetensors"}})");
  CHECK_THAT(m, Catch::Contains(R"(shard name 'a\x0ab.safetensors' must be a plain file name)"));
  CHECK(one_line(m));
  CHECK_THAT(open(R"({"weight_map": {"x": "../model.safetensors"}})"), Catch::Contains("must be a plain file name"));
}

TEST_CASE("hardening: config.json: a model_type with a newline still gives a one-line error", "[hardening][fuzz]") {
  nlohmann::json j = {{"model_type", "llama\nx"}};
  const std::string m = message_of([&] { ModelConfig::from_json(j); });
  CHECK_THAT(m, Catch::Contains(R"(model_type 'llama\x0ax' is not a Qwen3.5/3.6 MoE text model)"));
  CHECK(one_line(m));
}

TEST_CASE("hardening: --ops: line breaks and control characters are refused with a one-line error", "[hardening][fuzz]") {
  // Confirmed with fuzz_plan (tests/fuzz/corpus/plan/regress-newline.txt): "matmul\n=vulkan" gave "unknown op
  // 'matmul<newline>' (ops: ...)" on two lines.
  const std::string m = message_of([] { gpu::Plan::parse("matmul\n=vulkan", nullptr); });
  CHECK_THAT(m, Catch::Contains(R"(--ops entry 'matmul\x0a=vulkan' contains a control character)"));
  CHECK(one_line(m));
  CHECK_THAT(message_of([] { gpu::Plan::parse("a=b,\x1b[31m=x", nullptr); }), Catch::Contains("contains a control character"));
  CHECK(gpu::Plan::parse(" matmul=reference\r\n", nullptr).describe() == "all reference");  // line ends around entries are spacing
  // Found by fuzz_plan (corpus/plan/crash-multiline-no-pair): separators only, with a line break between them.
  const std::string none = message_of([] { gpu::Plan::parse(",,,,\n,,,,,,", nullptr); });
  CHECK_THAT(none, Catch::Contains(R"(--ops ',,,,\x0a,,,,,,' names no op=variant pair)"));
  CHECK(one_line(none));
}

TEST_CASE("hardening: fuzz_gguf: a tensor byte size that overflows in ne[0] alone is rejected", "[hardening][fuzz]") {
  // Found by fuzz_gguf (tests/fuzz/corpus/gguf/crash-row-bytes-overflow.gguf): an F32 tensor of ne = [2^62 + 8, 1]
  // needs 2^64 + 32 bytes, but ne[0] * 4 was multiplied unchecked and wrapped to 32, which the 32 data bytes behind
  // the header satisfied; a consumer sizing one row by ne[0] then asked for 2^62 + 8 floats (std::length_error).
  auto gguf = [](int64_t ne0, uint32_t type) {
    std::vector<uint8_t> b;
    auto put = [&](auto v) {
      const auto* p = reinterpret_cast<const uint8_t*>(&v);
      b.insert(b.end(), p, p + sizeof v);
    };
    put(uint32_t(0x46554747));  // "GGUF"
    put(uint32_t(3));
    put(uint64_t(1));  // one tensor
    put(uint64_t(0));  // no metadata
    put(uint64_t(1));
    b.push_back('t');
    put(uint32_t(2));
    put(ne0);
    put(int64_t(1));
    put(type);
    put(uint64_t(0));  // offset
    b.resize(96 + 32);  // the 65-byte header aligned to 32, then 32 data bytes
    return b;
  };
  for (const auto& [ne0, type] : std::vector<std::pair<int64_t, uint32_t>>{
           {(int64_t(1) << 62) + 8, 0},                  // f32, 4 bytes per value: 2^64 + 32 bytes
           {std::numeric_limits<int64_t>::max(), 0},     // f32
           {(int64_t(1) << 61) + 4, 28}}) {              // f64, 8 bytes per value: 2^64 + 32 bytes
    INFO("ne[0] = " << ne0 << ", type " << type);
    const std::string m = message_of([&] { quant::Reader::from_bytes(gguf(ne0, type), "fuzz.gguf"); });
    CHECK_THAT(m, Catch::Contains("fuzz.gguf: tensor 't': overflow in byte size"));
    CHECK(one_line(m));
  }
  const quant::Reader ok = quant::Reader::from_bytes(gguf(8, 0), "ok.gguf");  // the same file with ne[0] = 8 reads
  CHECK(ok.tensors().at(0).nbytes == 32);
}

TEST_CASE("hardening: a switch from the environment takes 0 or 1 and refuses anything else", "[hardening][env]") {
  const char* name = "HYBRIDLAB_TEST_SWITCH";
  ::unsetenv(name);
  CHECK_FALSE(env_switch(name));
  for (auto [v, want] : {std::pair{"", false}, {"0", false}, {"1", true}}) {
    ::setenv(name, v, 1);
    CHECK(env_switch(name) == want);
  }
  for (const char* v : {"yes", "true", "2", " 1"}) {
    ::setenv(name, v, 1);
    CHECK_THROWS_WITH(env_switch(name), Catch::Contains("HYBRIDLAB_TEST_SWITCH") && Catch::Contains("give 0 or 1"));
  }
  ::unsetenv(name);
}
