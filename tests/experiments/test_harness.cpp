// The experiment harness: the napkin math of each experiment on hand-computed cases, the report's JSON
// schema, a QUICK run end to end on this machine's Vulkan device, and a wrong variant shown as failing.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include "experiments/harness.h"
#include "test_util.h"

using namespace hl;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string tmp_reports() {
  const fs::path p = fs::temp_directory_path() / ("hybridlab-reports-" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

std::unique_ptr<gpu::Device>& device_slot() {
  static std::unique_ptr<gpu::Device> d;
  return d;
}
gpu::Device& device() {  // released after the tests (hl_test_at_teardown)
  auto& d = device_slot();
  if (!d) {
    d = std::make_unique<gpu::Device>();
    hl_test_at_teardown([] { device_slot().reset(); });
  }
  return *d;
}

const exp::Case& find_case(const std::vector<exp::Part>& parts, const std::string& op, const std::string& label) {
  for (auto& p : parts)
    if (p.op == op)
      for (auto& c : p.cases)
        if (c.label == label) return c;
  FAIL("no case " << op << " " << label);
  throw;
}

}  // namespace

TEST_CASE("experiments: bytes and flops of each experiment on hand-computed cases", "[experiments]") {
  exp::Context full{device(), {}, {}, false};
  // matmul 2048 -> 8192, one column: the weight (64 MiB f32), x and y once; 2 flops per weight.
  auto mm = exp::experiment("matmul").parts(full);
  const auto& c1 = find_case(mm, "matmul", "qkv 2048->8192 n=1");
  CHECK(c1.cost.bytes == 4.0 * (2048.0 * 8192 + 2048 + 8192));
  CHECK(c1.cost.flops == 2.0 * 2048 * 8192);
  CHECK(find_case(mm, "lm_head", "lm_head 2048->248320 n=512").cost.flops == 2.0 * 512 * 2048 * 248320);
  // ssm_scan at T = 1: q, k (2 x 2048), v (4096), beta and g (2 x 32) read, o (4096) written, the 32 x 128 x 128
  // state read and written; 7 d_k d_v flops per value head.
  auto ss = exp::experiment("ssm_scan").parts(full);
  const auto& s1 = find_case(ss, "ssm_scan", "T=1");
  CHECK(s1.cost.bytes == 4.0 * (2 * 2048 + 2 * 4096 + 64 + 2 * 32 * 128 * 128));
  CHECK(s1.cost.flops == 7.0 * 32 * 128 * 128);
  // attention decode at context 512: 16 query heads x 512 visible keys x 4 x 256 flops.
  auto at = exp::experiment("attention").parts(full);
  CHECK(find_case(at, "attention", "decode ctx=512").cost.flops == 4.0 * 256 * 16 * 512);
  // prefill T = 64 from an empty cache: 64 * 65 / 2 visible pairs per head.
  CHECK(find_case(at, "attention", "prefill T=64").cost.flops == 4.0 * 256 * 16 * (64.0 * 65 / 2));
  // ssm_conv at T = 64: x read, y written, taps, the state read and written.
  auto cv = exp::experiment("ssm_conv").parts(full);
  CHECK(find_case(cv, "ssm_conv", "T=64").cost.bytes == 4.0 * (2 * 64 * 8192 + 8192 * 4 + 2 * 3 * 8192));
  // moe: every routed-to expert's three matrices once.
  auto moe = exp::experiment("moe").parts(full);
  const auto& e1 = find_case(moe, "moe_experts", "T=1");
  CHECK(e1.shape.at("experts_used") == 8);
  CHECK(e1.cost.bytes == 4.0 * 8 * 3 * 512 * 2048 + 4.0 * (2 * 2048 + 2 * 8));
  CHECK(e1.cost.flops == 6.0 * 8 * 512 * 2048);
  CHECK_THROWS_WITH(exp::experiment("nope"), Catch::Contains("unknown experiment 'nope'") && Catch::Contains("ssm_scan"));
}

TEST_CASE("experiments: a plain read of the same bytes, interpolated from the bandwidth report's sizes", "[experiments]") {
  exp::Ceilings c;
  c.read_gbps = 1000;  // 1 MB per us
  CHECK(exp::same_size_read_us(c, 4e6) == 0);  // no sizes measured
  const double mib = 1048576;
  c.size_reads = {{mib, 4.0}, {2 * mib, 5.0}, {4 * mib, 6.0}};
  CHECK(exp::same_size_read_us(c, 0.5 * mib) == 0);  // below the smallest: its fixed costs unknown
  CHECK(exp::same_size_read_us(c, mib) == Approx(4.0));
  CHECK(exp::same_size_read_us(c, 1.5 * mib) == Approx(4.5));
  CHECK(exp::same_size_read_us(c, 3 * mib) == Approx(5.5));
  CHECK(exp::same_size_read_us(c, 4 * mib) == Approx(6.0));
  CHECK(exp::same_size_read_us(c, 4 * mib + 2e6) == Approx(8.0));  // past the largest: at the read ceiling
}

TEST_CASE("experiments: timed runs cycle through input sets that pass the cache", "[experiments]") {
  const double mib = 1048576;
  CHECK(exp::timing_sets_count(0.6e6, false) == 224);   // a decode mat-vec's 0.6 MB: 134 MB in all
  CHECK(exp::timing_sets_count(9.5e6, false) == 15);
  CHECK(exp::timing_sets_count(200 * mib, false) == 1);  // larger than the cache alone
  CHECK(exp::timing_sets_count(1e3, false) == 256);     // at most 256
  CHECK(exp::timing_sets_count(0.6e6, true) == 8);      // QUICK: at most 8
  CHECK(exp::timing_sets_count(128 * mib, true) == 1);
}

TEST_CASE("experiments: a QUICK run writes a report with the documented schema", "[experiments]") {
  exp::Options o;
  o.quick = true;
  o.runs = 3;
  o.out_dir = tmp_reports();
  const json r = exp::run_experiment("ssm_conv", o);
  const std::string dir = o.out_dir + "/" + r["device"]["slug"].get<std::string>();
  REQUIRE(fs::exists(dir + "/ssm_conv.json"));
  REQUIRE(fs::exists(dir + "/ssm_conv.md"));
  REQUIRE(fs::exists(dir + "/bandwidth.json"));  // measured first: every report divides by it
  std::ifstream f(dir + "/ssm_conv.json");
  const json j = json::parse(f);
  CHECK(j["schema"] == "hybridlab.experiment/1");
  for (const char* k : {"experiment", "device", "commit", "date", "quick", "ceilings", "projection", "cases", "tolerances"})
    CHECK(j.contains(k));
  CHECK(j["quick"] == true);
  CHECK(j["ceilings"]["read_GBps"].get<double>() > 0);
  // The CPU rows' ceilings, measured in the run at each thread count a CPU row used.
  REQUIRE(j.contains("cpu_ceilings"));
  for (auto& cc : j["cpu_ceilings"])
    for (const char* k : {"read_GBps", "cache_read_GBps", "f32_GFLOPs"}) CHECK(cc[k].get<double>() > 0);
  REQUIRE(j["cases"].size() == 4);  // ssm_conv and gdn_prep at T = 1 and 64
  for (auto& c : j["cases"]) {
    CHECK(c["bytes"].get<double>() > 0);
    bool timed_gpu = false;
    for (auto& res : c["results"]) {
      if (res["status"] == "reference") {  // a CPU row: divided by the CPU's ceilings
        CHECK(res["fraction_of_ceiling"].get<double>() > 0);
        CHECK(res["roofline_us"].get<double>() > 0);
      }
      if (res["status"] == "pass") {
        timed_gpu = true;
        CHECK(res["time_us"]["median"].get<double>() > 0);
        CHECK(res["time_us"]["runs"] == 3);
        CHECK(res["rel_l2"].get<double>() <= j["tolerances"][c["op"].get<std::string>()].get<double>());
        for (const char* k : {"GBps", "TFLOPs", "fraction_of_ceiling", "rdna4_projected_us", "bound"}) CHECK(res.contains(k));
      }
    }
    CHECK(timed_gpu);
  }
  std::ifstream md(dir + "/ssm_conv.md");
  const std::string text((std::istreambuf_iterator<char>(md)), {});
  CHECK_THAT(text, Catch::Contains("RDNA4 projection") && Catch::Contains("QUICK"));
  fs::remove_all(o.out_dir);
}

TEST_CASE("experiments: --chain times GPU variants as chains of dependent calls and says so", "[experiments]") {
  exp::Options o;
  o.quick = true;
  o.runs = 2;
  o.chain = 4;
  o.cases = "T=1$";
  o.tag = "chain";
  o.out_dir = tmp_reports();
  const json j = exp::run_experiment("ssm_conv", o);
  CHECK(j["chain"] == 4);
  CHECK(j["timing_floor_us"].get<double>() > 0);
  int chained = 0;
  for (auto& c : j["cases"])
    for (auto& res : c["results"])
      if (res["status"] == "pass" && res["where"] == "GPU") {
        ++chained;
        CHECK(res["time_us"]["median"].get<double>() > 0);
        CHECK_THAT(res["timing"].get<std::string>(), Catch::Contains("4 calls") && Catch::Contains("barrier"));
        // The warm-up counts a chain's 4 calls as the work they are: 0.3 s of it (GPU time), not 0.3 s of per-call
        // times (1.2 s of work). Hybridlab's own kernels only: Halide's Vulkan ones are capped by wall time.
        const auto& t = res["time_us"];
        if (res["variant"].get<std::string>().starts_with("vulkan:")) {
          const double chain_ms = 4 * t["max"].get<double>() * 1e-3;
          CHECK(t["warmup_ms"].get<double>() >= 300);
          // Past 0.3 s by one warm-up chain, which may be slower than any timed one (the first run cold, a busy CPU
          // device): 150 ms of slack, still far below the 1.2 s (capped at 1 s) a per-call count would run.
          CHECK(t["warmup_ms"].get<double>() <= std::min(1000.0, 450 + 4 * chain_ms));
          // Its runs at the timed chains' median: about 0.3 s of work too (1.2 s if it counted per-call times).
          CHECK(t["warmup_runs"].get<int>() * 4 * t["median"].get<double>() * 1e-3 <= 1000);
        }
        CHECK(t["warmup_runs"].get<int>() >= 2);
        CHECK(t["warmup_wall_ms"].get<double>() > 0);
      }
  CHECK(chained > 0);
  const std::string dir = o.out_dir + "/" + j["device"]["slug"].get<std::string>();
  std::ifstream md(dir + "/ssm_conv-chain.md");
  const std::string text((std::istreambuf_iterator<char>(md)), {});
  CHECK_THAT(text, Catch::Contains("chains of 4 calls"));
  fs::remove_all(o.out_dir);
}

TEST_CASE("experiments: --dispatches times each GPU variant's dispatches by pipeline", "[experiments]") {
  exp::Options o;
  o.quick = true;
  o.runs = 2;
  o.dispatches = true;
  o.cases = "^T=8 32 experts";
  o.only_variant = "vulkan:route_pack";
  o.tag = "dispatches";
  o.out_dir = tmp_reports();
  const json j = exp::run_experiment("moe", o);
  int profiled = 0;
  for (auto& c : j["cases"])
    for (auto& res : c["results"])
      if (res["variant"] == "vulkan:route_pack" && res["status"] == "pass") {
        ++profiled;
        REQUIRE(res.contains("dispatches"));
        const json& d = res["dispatches"];
        CHECK(d.size() >= 3);  // routing, packing, the expert GEMMs, the scatter: distinct pipelines
        for (auto& x : d) {
          CHECK(!x["pipeline"].get<std::string>().empty());
          CHECK(x["calls"].get<int>() >= 1);
          CHECK(x["us"].get<double>() >= 0);
        }
      }
  CHECK(profiled > 0);
  const std::string dir = o.out_dir + "/" + j["device"]["slug"].get<std::string>();
  std::ifstream md(dir + "/moe-dispatches.md");
  const std::string text((std::istreambuf_iterator<char>(md)), {});
  CHECK_THAT(text, Catch::Contains("Dispatches of `vulkan:route_pack`") && Catch::Contains("| pipeline | dispatches per call"));
  fs::remove_all(o.out_dir);
}

// The MoE block's decode kernels at QUICK shapes, the add and norm in front (what decode runs), GPU only.
// A quick partial run of one case's vulkan:fused_decode (cases: "op label" regex).
static exp::Options fused_decode_options(const char* cases, const char* tag) {
  exp::Options o;
  o.quick = true;
  o.runs = 2;
  o.cases = cases;
  o.only_variant = "vulkan:fused_decode";
  o.tag = tag;
  o.gpu_only = true;
  o.out_dir = tmp_reports();
  return o;
}

static exp::Options moe_decode_options(const char* tag) {
  // "op label": moe_block's case of the same label left out
  return fused_decode_options("^add_rmsnorm_moe_block q4_K T=1 ", tag);
}

TEST_CASE("experiments: --sweep-axes varies each swept tunable alone, beside the profile's tuning", "[experiments]") {
  exp::Options o = moe_decode_options("axes");
  o.sweep_axes = true;
  const json j = exp::run_experiment("moe", o);
  CHECK(j["sweep_axes"] == true);
  const vk::DeviceProfile& prof = device().ctx().profile();
  int cases = 0;
  for (auto& c : j["cases"]) {
    CHECK(c["op"] == "add_rmsnorm_moe_block");  // moe_block's kernels at moe_block's tunables
    ++cases;
    std::set<std::pair<std::string, uint32_t>> seen;
    int base = 0;
    for (auto& r : c["results"]) {
      if (r["variant"] != "vulkan:fused_decode") continue;
      CHECK(r["status"] == "pass");
      const auto& params = r["params"];
      REQUIRE(params.size() <= 1);
      if (params.empty()) {
        ++base;
        continue;
      }
      const std::string key = params.begin().key();
      const uint32_t val = params.begin().value();
      CHECK(key.starts_with("moe_block.fused_decode."));
      CHECK(val != prof.get(key));  // the profile's value is the base point, not a second row
      CHECK(seen.insert({key, val}).second);
    }
    CHECK(base == 1);
    // x_rows, gate_up_rows, down_rows (4 values each), wg (3), early_down and early_x (2): one value of each is the base.
    CHECK(seen.size() == 3 * 3 + 2 + 1 + 1);
    CHECK(seen.count({"moe_block.fused_decode.early_x", 1 - prof.get("moe_block.fused_decode.early_x")}));
  }
  CHECK(cases == 1);
  fs::remove_all(o.out_dir);
}

TEST_CASE("experiments: --sweep replaces the experiment's sweeps with the given keys and values", "[experiments]") {
  exp::Options o = moe_decode_options("sweep");
  o.sweep = {{"moe_block.fused_decode.gate_up_rows", {8, 16}}, {"moe_block.fused_decode.wg", {256, 512}}};
  const json j = exp::run_experiment("moe", o);
  CHECK(j["sweep"]["moe_block.fused_decode.wg"] == json::array({256, 512}));
  std::set<std::pair<uint32_t, uint32_t>> points;
  for (auto& c : j["cases"])
    for (auto& r : c["results"])
      if (r["variant"] == "vulkan:fused_decode") {
        CHECK(r["status"] == "pass");
        REQUIRE(r["params"].size() == 2);  // the product of the two keys, none of the experiment's own
        points.insert({r["params"]["moe_block.fused_decode.gate_up_rows"].get<uint32_t>(),
                       r["params"]["moe_block.fused_decode.wg"].get<uint32_t>()});
      }
  CHECK(points == std::set<std::pair<uint32_t, uint32_t>>{{8, 256}, {8, 512}, {16, 256}, {16, 512}});
  fs::remove_all(o.out_dir);
}

// A key the variant declares under another name than its own (the fused projections read their kernel's keys) is swept
// for it, not silently left out.
TEST_CASE("experiments: --sweep reaches keys a variant declares under its kernel's name", "[experiments]") {
  exp::Options o = fused_decode_options("^add_rmsnorm_matmul_group gdn T=1 .*qkv q4_K", "declared");
  const std::string key = "add_rmsnorm_matmul_group.qmatvec_direct.rows";
  o.sweep = {{key, {1, 3}}};
  const json j = exp::run_experiment("matmul_group", o);
  std::set<uint32_t> rows;
  for (auto& c : j["cases"])
    for (auto& r : c["results"])
      if (r["variant"] == "vulkan:fused_decode") {
        CHECK(r["status"] == "pass");
        REQUIRE(r["params"].size() == 1);
        rows.insert(r["params"][key].get<uint32_t>());
      }
  CHECK(rows == std::set<uint32_t>{1, 3});
  fs::remove_all(o.out_dir);
}

TEST_CASE("experiments: --peers shows the rows measured in the same run instead of the quoted ones", "[experiments]") {
  exp::Options o;
  o.quick = true;
  o.runs = 2;
  o.cases = "^T=1$";
  o.tag = "peers";
  o.no_sweep = o.gpu_only = true;
  o.out_dir = tmp_reports();
  const std::string slug = device().ctx().device_slug();
  o.peers_file = o.out_dir + "/peers.json";
  {
    json peers = {{"about", "llama.cpp test rows"},
                  {"peers", {{{"experiment", "ssm_conv"}, {"op", "ssm_conv"}, {"case", "T=1"}, {"device", slug},
                              {"name", "llama.cpp Vulkan SSM_CONV"}, {"time_us", 4.5}, {"source", "a log"}},
                             {{"experiment", "ssm_conv"}, {"op", "ssm_conv"}, {"case", "T=1"}, {"device", "other-gpu"},
                              {"name", "elsewhere"}, {"time_us", 1.0}, {"source", "a log"}}}}};
    std::ofstream(o.peers_file) << peers.dump();
  }
  const json j = exp::run_experiment("ssm_conv", o);
  CHECK(j["peers_about"] == "llama.cpp test rows");
  CHECK(j["no_sweep"] == true);
  for (auto& c : j["cases"]) {  // the reference, GPU variants once each (no sweep), CPU ones skipped
    std::set<std::string> seen_variants;
    for (auto& r : c["results"]) {
      const std::string st = r["status"];
      if (st == "pass") CHECK(r["where"].get<std::string>().starts_with("GPU"));
      if (st == "pass") CHECK(seen_variants.insert(r["variant"].get<std::string>()).second);
      if (st == "skipped") CHECK_THAT(r["why"].get<std::string>(), Catch::Contains("--gpu-only") || Catch::Contains("plain"));
    }
  }
  bool seen = false;
  for (auto& c : j["cases"])
    if (c["op"] == "ssm_conv") {
      REQUIRE(c["peers"].size() == 1);  // this device's row only
      CHECK(c["peers"][0]["measured"] == true);
      CHECK(c["peers"][0]["time_us"] == 4.5);
      seen = true;
    }
  CHECK(seen);
  std::ifstream md(o.out_dir + "/" + slug + "/ssm_conv-peers.md");
  const std::string text((std::istreambuf_iterator<char>(md)), {});
  CHECK_THAT(text, Catch::Contains("llama.cpp Vulkan SSM_CONV") && Catch::Contains("measured, same run"));
  // A file that is not a peers JSON, or a row without a time: one clear error before anything runs.
  for (const std::string bad : {"{\"peers\": 3}", "not json", "{\"peers\": [{\"experiment\": \"x\", \"case\": \"y\", \"device\": \"z\"}]}"}) {
    std::ofstream(o.peers_file) << bad;
    CHECK_THROWS_WITH(exp::run_experiment("ssm_conv", o), Catch::Contains("--peers"));
  }
  o.peers_file = o.out_dir + "/none.json";
  CHECK_THROWS_WITH(exp::run_experiment("ssm_conv", o), Catch::Contains("cannot read"));
  o.peers_file.clear();
  o.tag.clear();
  o.cases.clear();
  CHECK_THROWS_WITH(exp::run_experiment("ssm_conv", o), Catch::Contains("needs --tag"));
  o.tag = "peers";
  o.family = "nosuch";
  CHECK_THROWS_WITH(exp::run_experiment("ssm_conv", o), Catch::Contains("--family 'nosuch'"));
  // --family vulkan: the reference and hand-written Vulkan variants only.
  o.family = "vulkan";
  o.cases = "^T=1$";
  for (auto& c : exp::run_experiment("ssm_conv", o)["cases"])
    for (auto& r : c["results"]) {
      const std::string v = r["variant"];
      CHECK((v == "reference" || v.starts_with("vulkan:")));
    }
  fs::remove_all(o.out_dir);
}

TEST_CASE("experiments: a wrong variant is reported as failing and is not timed", "[experiments]") {
  gpu::Variant wrong = gpu::Registry::get().variant("add", "vulkan:elementwise");
  wrong.name = "vulkan:wrong";
  const auto right = wrong.run;
  wrong.run = [right](gpu::VariantCtx& c, gpu::OpArgs& a) {
    right(c, a);
    Tensor y = a.t.at("y").clone();
    y.f32_mut()(0, 0) += 1.0f;  // one wrong element
    a.set("y", y);
  };
  exp::Experiment e{"wrong", "a wrong variant", [&](const exp::Context&) {
                      exp::Part p{"add"};
                      exp::Case c;
                      c.label = "n=1000";
                      c.shape = {{"n", 1000}};
                      c.cost = {12000, 1000};
                      c.inputs = [](std::mt19937_64& g) {
                        return gpu::OpArgs{{{"a", Tensor::from(exp::randn(g, 1, 1000))}, {"b", Tensor::from(exp::randn(g, 1, 1000))}}, {}, {}};
                      };
                      p.cases = {c};
                      p.variants = {"reference", "vulkan:elementwise"};
                      p.extra_variants = {wrong};
                      p.tolerance = 1e-6;
                      return std::vector<exp::Part>{p};
                    },
                    {}};
  exp::Options o;
  o.quick = true;
  o.runs = 3;
  o.out_dir = tmp_reports();
  const json r = exp::run_experiment(e, o);
  CHECK(r["failures"] == 1);
  bool saw_fail = false, saw_pass = false;
  for (auto& res : r["cases"][0]["results"]) {
    if (res["variant"] == "vulkan:wrong") {
      saw_fail = res["status"] == "fail";
      CHECK(!res.contains("time_us"));
    }
    if (res["variant"] == "vulkan:elementwise") saw_pass = res["status"] == "pass";
  }
  CHECK(saw_fail);
  CHECK(saw_pass);
  // --time-failing (diagnosis): the failing variant is timed too, and still counted as a failure.
  o.time_failing = true;
  const json t = exp::run_experiment(e, o);
  CHECK(t["failures"] == 1);
  for (auto& res : t["cases"][0]["results"])
    if (res["variant"] == "vulkan:wrong") {
      CHECK(res["status"] == "fail");
      CHECK(res.contains("time_us"));
    }
  fs::remove_all(o.out_dir);
}

TEST_CASE("experiments: options that match nothing or name a path are refused before anything runs or is written", "[experiments]") {
  const std::string out = tmp_reports();
  auto error = [&](const std::string& name, const std::function<void(exp::Options&)>& set) {
    exp::Options o;
    o.quick = true;
    o.out_dir = out;
    set(o);
    try {
      exp::run_experiment(name, o);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("(ran)");
  };
  CHECK_THAT(error("norms", [](exp::Options& o) { o.runs = 0; }), Catch::Contains("--runs 0: give at least 1 timed run"));
  CHECK_THAT(error("norms", [](exp::Options& o) { o.runs = -3; }), Catch::Contains("--runs -3"));
  CHECK_THAT(error("norms", [](exp::Options& o) { o.full = true; }), Catch::Contains("--quick and --full exclude each other"));
  CHECK_THAT(error("norms", [](exp::Options& o) { o.tag = "../../evil"; }), Catch::Contains("a tag is a name"));
  CHECK_THAT(error("norms", [](exp::Options& o) { o.tag = ".hidden"; }), Catch::Contains("a tag is a name"));
  CHECK_THAT(error("norms", [](exp::Options& o) { o.only_variant = "vulkan:nope"; }),
             Catch::Contains("--variant 'vulkan:nope': experiment norms has no such variant") && Catch::Contains("vulkan:rowgroup"));
  CHECK_THAT(error("norms", [](exp::Options& o) { o.cases = "zzz"; }),
             Catch::Contains("--cases 'zzz': matches none of experiment norms's cases") && Catch::Contains("T=64"));
  CHECK_THAT(error("norms", [](exp::Options& o) { o.cases = "(["; }), Catch::Contains("--cases '([': not a valid regular expression"));
  CHECK_THAT(error("norms", [](exp::Options& o) { o.cases = "T=1$"; }),
             Catch::Contains("a partial run needs --tag NAME"));  // never over the full report
  CHECK_THAT(error("forward", [](exp::Options& o) { o.only_variant = "vulkan:rowgroup"; }),
             Catch::Contains("--sweep-axes and --gpu-only apply to op experiments"));
  CHECK_THAT(error("norms", [](exp::Options& o) { o.no_sweep = o.sweep_axes = true, o.tag = "x"; }),
             Catch::Contains("--no-sweep and --sweep-axes: give one of them"));
  CHECK_THAT(error("moe", [](exp::Options& o) { o.sweep = {{"matmul.qmatvec.rows", {4}}}, o.tag = "x"; }),
             Catch::Contains("--sweep 'matmul.qmatvec.rows': not a tunable of experiment moe's ops") &&
                 Catch::Contains("moe_block.fused_decode.wg"));
  CHECK_THAT(error("moe", [](exp::Options& o) { o.sweep = {{"moe_block.fused_decode.nope", {4}}}, o.tag = "x"; }),
             Catch::Contains("--sweep 'moe_block.fused_decode.nope': no such tunable"));
  CHECK_THAT(error("norms", [](exp::Options& o) { o.sweep = {{"norms.x", {}}}, o.tag = "x"; }),
             Catch::Contains("give at least one value"));
  CHECK_THAT(error("norms", [](exp::Options& o) { o.out_dir = "/proc/hybridlab-no"; }), Catch::Contains("cannot create the report directory"));
  // Nothing measured, nothing written (not even the bandwidth ceilings every report divides by).
  bool any = false;
  if (fs::exists(out))
    for (auto& f : fs::recursive_directory_iterator(out)) any |= f.path().extension() == ".json";
  CHECK_FALSE(any);
  fs::remove_all(out);
}
