// `hybridlab bench`: prefill and decode throughput of a plan, in the spirit of llama-bench. Prompts of
// synthetic token ids go through the plan's prefill path in chunks; decode is greedy (the argmax of each step's
// logits, on the device where the logits are, feeds the next step). Every test runs twice to warm up (once checking
// its logits, once as timed), then --runs times (the median is reported); one more profiled run per test gives the
// per-op breakdown.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "experiments/harness.h"
#include "plan/argmax.h"
#include "plan/executor.h"
#include "model/forward.h"
#include "tools/commands.h"

namespace hl::cli {

namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

constexpr int kMaxWarmup = 100;  // untimed runs per test at most, whatever --warmup-ms asks

struct BenchArgs {
  ModelArgs model;
  PlanArgs plan;
  std::string prompts = "512", out = "reports", tag;
  int64_t gen = 128, chunk = 512;
  int runs = 3, warmup = 2;
  double warmup_ms = 1000;  // and untimed runs until this much wall time has passed in them (at most kMaxWarmup)
  uint64_t token_seed = 1;
  bool no_breakdown = false, no_replay = false;
  bool tag_given = false;
  std::vector<std::string> peers;  // --peer 'LABEL=[KEY=VALUE ...] LLAMA_BENCH'
};

// A peer engine measured beside hybridlab on the same GGUF: llama.cpp's llama-bench, run with the bench's prompt
// lengths, decode length and runs, its JSON output kept in the report.
struct Peer {
  std::string label, exe;
  std::vector<std::string> env;  // KEY=VALUE, set for it alone
};

Peer parse_peer(const std::string& spec) {
  const size_t eq = spec.find('=');
  Peer p;
  p.label = eq == std::string::npos ? "" : spec.substr(0, eq);
  if (p.label.empty() || std::any_of(p.label.begin(), p.label.end(), [](unsigned char c) { return c < 32 || c == 127; }))
    fail("--peer {}: give LABEL=[KEY=VALUE ...] PATH-TO-LLAMA-BENCH", quant::printable(spec, 60));
  std::istringstream in(spec.substr(eq + 1));
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  if (words.empty()) fail("--peer '{}': no llama-bench path after the label", p.label);
  p.exe = words.back();
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    const std::string& kv = words[i];
    const size_t k = kv.find('=');
    const bool ok = k != std::string::npos && k > 0 && std::all_of(kv.begin(), kv.begin() + k, [](unsigned char c) {
      return std::isupper(c) || std::isdigit(c) || c == '_';
    });
    if (!ok) fail("--peer '{}': {} is not an environment assignment KEY=VALUE", p.label, quant::printable(kv, 40));
    p.env.push_back(kv);
  }
  if (!std::filesystem::is_regular_file(p.exe) || access(p.exe.c_str(), X_OK) != 0)
    fail("--peer '{}': {} is not an executable file", p.label, quant::printable(p.exe, 80));
  return p;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs the peer; its JSON rows (one per test) with the command that made them. Error: a one-line message.
json run_peer(const Peer& p, const std::string& model, const std::string& prompts, int64_t gen, int runs) {
  std::string cmd = "env";
  for (auto& e : p.env) cmd += " " + shell_quote(e);
  cmd += fmt::format(" {} -m {} -p {} -n {} -r {} -ngl 99 -o json 2>/dev/null", shell_quote(p.exe), shell_quote(model),
                     shell_quote(prompts), gen, runs);
  std::string out;
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) fail("--peer '{}': cannot start {}", p.label, p.exe);
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) {
    out.append(buf, n);
    if (out.size() > (64u << 20)) break;  // a runaway peer: its output is not llama-bench's
  }
  const int rc = pclose(f);
  if (rc != 0) fail("--peer '{}': llama-bench exited with status {} ({})", p.label, rc, cmd);
  const size_t at = out.find('[');
  json rows;
  try {
    rows = at == std::string::npos ? json() : json::parse(out.substr(at));
  } catch (const std::exception&) {
    rows = json();
  }
  if (!rows.is_array() || rows.empty())
    fail("--peer '{}': llama-bench printed no JSON array of results ({} bytes of output)", p.label, out.size());
  for (auto& r : rows)
    if (!r.is_object() || !r.contains("n_prompt") || !r.contains("n_gen") || !r.contains("avg_ts"))
      fail("--peer '{}': a llama-bench row lacks n_prompt, n_gen or avg_ts", p.label);
  return {{"label", p.label}, {"command", cmd}, {"llama_bench", rows}};
}

// One test: a prompt of `tokens` ids through prefill (pp), or `tokens` greedy decode steps (tg).
struct Test {
  std::string label;
  bool decode;
  int64_t tokens;
};

struct RunResult {
  double wall_s = 0, device_s = -1;  // device_s: Vulkan timestamps at the start and end (-1: no device)
  uint64_t dispatches = 0, submits = 0;  // recorded into the device's stream during the run
  uint64_t barriers = 0;                  // compute barriers the GPU ran between dispatches (recorded and replayed)
  uint64_t replayed = 0;                 // run again from captured decode segments
  double record_s = 0;  // host time inside the forward steps: recording, flushing (and waiting past 16 lists in flight)
  // tg on a device: GPU time from each step's first command to its last (Vulkan timestamps around the step), and
  // from a step's end to the next one's start (the argmax, its id's download and the host's turnaround), summed.
  double step_gpu_s = -1, between_steps_s = -1;
  std::vector<int32_t> generated;    // tg: the greedy tokens
};

// "0" alone: no prompt test (a decode-only bench, as llama-bench's -p 0).
std::vector<int64_t> parse_lengths(const std::string& s) {
  std::vector<int64_t> v;
  if (s == "0") return v;
  for (size_t at = 0; at <= s.size();) {
    const size_t end = std::min(s.find(',', at), s.size());
    int64_t n = 0;
    const auto [ptr, ec] = std::from_chars(s.data() + at, s.data() + end, n);
    if (ec != std::errc() || ptr != s.data() + end || n <= 0 || n > (1 << 24))
      fail("-p: prompt lengths must be positive integers separated by commas (or 0 alone: no prompt test), got '{}'", s);
    v.push_back(n);
    at = end + 1;
  }
  return v;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// A file-name-safe name of the model: the preset and seed, or the file or checkpoint directory's last components.
std::string model_name(const ModelArgs& m) {
  std::string s;
  if (!m.preset.empty()) {
    s = fmt::format("{}-seed{}", m.preset, m.seed);
  } else {
    const std::filesystem::path p = std::filesystem::path(m.model).lexically_normal();
    const std::filesystem::path leaf = p.has_filename() ? p : p.parent_path();
    s = is_gguf_path(m.model) ? leaf.stem().string() : leaf.parent_path().filename().string() + "-" + leaf.filename().string();
  }
  if (m.layers) s += fmt::format("-L{}", m.layers);
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  return s;
}

class Bench {
 public:
  Bench(const BenchArgs& a, const ModelWeights& w, gpu::PlanExecutor& ex, gpu::Device* dev)
      : a_(a), w_(w), ex_(ex), dev_(dev) {}

  // One run of a test on a fresh forward pass (empty caches and states; the executor's weights stay resident).
  // Every run draws the same ids (the rng restarts from the token seed).
  RunResult run(const Test& t) {
    Forward<gpu::PlanExecutor> fwd(ex_, w_);
    std::mt19937_64 rng(a_.token_seed);
    std::uniform_int_distribution<int32_t> id(0, int32_t(w_.cfg.vocab - 1));
    const int64_t chunk = a_.chunk > 0 ? a_.chunk : t.tokens;
    RunResult r;
    const auto t0 = Clock::now();
    const gpu::DeviceStats s0 = dev_ ? dev_->stats() : gpu::DeviceStats{};
    const uint32_t q0 = dev_ ? dev_->timestamp() : 0;
    if (!t.decode) {
      std::vector<int32_t> prompt(size_t(t.tokens));
      for (auto& x : prompt) x = id(rng);
      for (int64_t p = 0; p < t.tokens; p += chunk) {
        const int64_t len = std::min(chunk, t.tokens - p);
        // Only the last row's logits, left where made (llama-bench's pp: the prompt's logits are not read).
        const auto s0 = Clock::now();
        const Tensor last = fwd.step({prompt.begin() + p, prompt.begin() + p + len}, Phase::Prefill,
                                     Forward<gpu::PlanExecutor>::Logits::Last);
        r.record_s += std::chrono::duration<double>(Clock::now() - s0).count();
        if (check_finite_) require_finite(last, "the prompt's last token");
      }
    } else {
      int32_t tok = id(rng);  // the first decode step starts from one random token at position 0
      r.generated.push_back(tok);
      // Replay (unless --no-replay, profiling, or an op on the host): step 0 as usual (it materialises anything
      // missing), step 1 captured, every later step a replay of it.
      const bool replay = !a_.no_replay && !profiling_ && ex_.can_capture();
      // decode.device_token: from the second replayed step on, the token is the step before's argmax left on the
      // device, so the host records and submits the next step without waiting; the ids are downloaded at the end.
      const bool device_token = replay && dev_->tune("decode.device_token") != 0;
      std::vector<Tensor> ids;  // the device's argmaxes, in order (device_token)
      std::vector<std::pair<uint32_t, uint32_t>> stamps;  // each step's first and last timestamps (not while profiling)
      for (int64_t i = 0; i < t.tokens; ++i) {
        const auto s0 = Clock::now();
        const uint32_t b = dev_ && !profiling_ ? dev_->timestamp() : 0;
        const Tensor logits = !replay || i == 0 ? fwd.step({tok}, Phase::Decode)
                              : i == 1          ? fwd.capture_decode(tok)
                              : ids.empty()     ? fwd.replay_decode(tok)
                                                : fwd.replay_decode(ids.back());
        if (dev_ && !profiling_) stamps.emplace_back(b, dev_->timestamp());
        r.record_s += std::chrono::duration<double>(Clock::now() - s0).count();
        if (check_finite_ && i == 0) require_finite(logits, "the first decode step");
        if (device_token && i >= 1) ids.push_back(gpu::argmax_device(*dev_, logits));
        else r.generated.push_back(tok = next_token(logits));
      }
      if (!ids.empty()) {  // one submission for all of them, not a round trip each
        std::vector<int32_t> got(ids.size());
        std::vector<gpu::Device::Download> parts;
        for (size_t i = 0; i < ids.size(); ++i) parts.push_back({ids[i].buffer(*dev_), &got[i], sizeof(int32_t)});
        dev_->download(parts);
        r.generated.insert(r.generated.end(), got.begin(), got.end());
      }
      if (!stamps.empty()) {
        dev_->sync();
        r.step_gpu_s = r.between_steps_s = 0;
        for (size_t i = 0; i < stamps.size(); ++i) {
          r.step_gpu_s += dev_->elapsed_ns(stamps[i].first, stamps[i].second) * 1e-9;
          if (i + 1 < stamps.size()) r.between_steps_s += dev_->elapsed_ns(stamps[i].second, stamps[i + 1].first) * 1e-9;
        }
      }
    }
    const uint32_t q1 = dev_ ? dev_->timestamp() : 0;
    if (dev_) dev_->sync();  // the phase ends when the device has finished its work
    r.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (dev_) {
      r.device_s = dev_->elapsed_ns(q0, q1) * 1e-9;
      r.dispatches = dev_->stats().dispatches - s0.dispatches, r.submits = dev_->stats().submits - s0.submits;
      r.replayed = dev_->stats().replayed_dispatches - s0.replayed_dispatches;
      r.barriers = dev_->stats().barriers - s0.barriers + dev_->stats().replayed_barriers - s0.replayed_barriers;
    }
    return r;
  }

  // The warm-up run checks the logits it makes (one row downloaded per check): NaN weights would otherwise give
  // tok/s and greedy tokens (the argmax of NaN rows) as if nothing were wrong. The timed runs check nothing.
  void set_check_finite(bool on) { check_finite_ = on; }
  void require_finite(const Tensor& logits, const char* what) {
    const Mat<float>& l = logits.f32();
    if (!l.allFinite())
      fail("non-finite values: the logits of {} hold {} NaN/Inf of {} values (run --validate to name the op that made them)",
           what, l.size() - l.array().isFinite().count(), l.size());
  }

  // Greedy: the argmax of a decode step's logits, on the device when they are there (one id downloaded).
  // While profiling it is timed like an op, under "argmax (bench)".
  int32_t next_token(const Tensor& logits) {
    if (!profiling_) return gpu::argmax_rows(dev_, logits).front();
    auto& o = argmax_time_;
    ++o.calls;
    if (dev_ && logits.device_current() && !logits.host_current()) {
      const uint32_t b = dev_->timestamp();
      const Tensor ids = gpu::argmax_device(*dev_, logits);
      const uint32_t e = dev_->timestamp();
      const int32_t tok = ids.i32()(0, 0);  // syncs, so the two timestamps can be read now
      o.ns += dev_->elapsed_ns(b, e), o.gpu = true;
      return tok;
    }
    const auto t0 = Clock::now();
    const int32_t tok = gpu::argmax_host(logits.f32()).front();
    o.ns += std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
    return tok;
  }

  // Per-op time of one more run: Vulkan ops by timestamps around their dispatches, host ops by wall clock
  // (PlanExecutor::set_profiling); greedy decode's argmax is listed as "argmax (bench)".
  json breakdown(const Test& t) {
    ex_.reset_op_times();
    ex_.set_profiling(true);
    profiling_ = true;
    argmax_time_ = {};
    const RunResult r = run(t);
    std::map<std::string, gpu::PlanExecutor::OpTime> times = ex_.op_times();
    ex_.set_profiling(false);
    profiling_ = false;
    if (argmax_time_.calls) times["argmax (bench)"] = argmax_time_;
    double total = 0;
    for (auto& [op, o] : times) total += o.ns;
    json ops = json::array();
    for (auto& [op, o] : times)
      ops.push_back({{"op", op}, {"ms", o.ns * 1e-6}, {"share", total > 0 ? o.ns / total : 0.0}, {"calls", o.calls},
                     {"timed_by", o.gpu ? "vulkan timestamps" : "host wall clock"}});
    std::sort(ops.begin(), ops.end(), [](const json& x, const json& y) { return x["ms"].get<double>() > y["ms"].get<double>(); });
    return {{"wall_ms", r.wall_s * 1e3}, {"ops_ms", total * 1e-6}, {"ops", ops}};
  }

 private:
  const BenchArgs& a_;
  const ModelWeights& w_;
  gpu::PlanExecutor& ex_;
  gpu::Device* dev_;
  bool profiling_ = false, check_finite_ = false;
  gpu::PlanExecutor::OpTime argmax_time_;
};

// What one token costs in weights, from the real tensor types: bytes a decode step reads (every tensor whole,
// except one embedding row and top_k of the n_experts stacked experts) and the projections' multiply-adds x 2
// (the same tensors by value count; attention's and the scan's own flops are not counted).
json per_token_cost(const ModelWeights& w) {
  ModelWeights m = w;  // for_each_weight takes a mutable model; the copy shares the tensor sources
  double bytes = 0, flops = 0;
  const double expert_share = double(w.cfg.top_k) / double(w.cfg.n_experts);
  for_each_weight(m, [&](const std::string& role, WeightRef& r) {
    double b = double(quant::row_bytes(r.storage_type(), r.cols)) * double(r.rows), values = double(r.rows) * double(r.cols);
    if (role == "embed") b /= double(r.rows), values = 0;  // a gathered row, no products
    if (role.find("moe.experts.") != std::string::npos) b *= expert_share, values *= expert_share;
    if (r.rows == 1) values = 0;  // norm gains and the shared expert's gate vector: no matrix products
    bytes += b, flops += 2 * values;
  });
  return {{"decode_bytes_per_token", bytes}, {"matmul_flops_per_token", flops},
          {"method", "weights read by one decode step (real block sizes; experts: top_k of n_experts; embedding: one row); "
                     "flops: 2 x the matrix values those products use"}};
}

// The GPU time of one dependent dispatch in this stream: 512 chained adds of one 2048-value row (the hidden
// width), each followed by the stream's barrier, timed by two timestamps around the whole chain in one
// submission; median of 5 after a warm-up. What a decode step's many small ops each cost at least.
double dispatch_floor_us(gpu::Device& d) {
  constexpr int kChain = 512;
  std::mt19937_64 g(7);
  std::normal_distribution<float> n;
  Mat<float> m(1, 2048);
  for (auto& v : m.reshaped()) v = n(g);
  const Tensor b = Tensor::from(m);
  const gpu::Variant& add = gpu::Registry::get().variant("add", "vulkan:elementwise");
  gpu::VariantCtx ctx;
  ctx.dev = &d;
  std::vector<double> us;
  for (int run = 0; run < 6; ++run) {
    Tensor x = b;
    b.buffer(d), d.sync();  // uploaded before the timing
    const double ns = d.time_ns([&] {
      for (int i = 0; i < kChain; ++i) {
        gpu::OpArgs a{{{"a", x}, {"b", b}}, {}, {}};
        add.run(ctx, a);
        x = a.t.at("y");
      }
    });
    if (run > 0) us.push_back(ns * 1e-3 / kChain);
  }
  return median(us);
}

json host_device_json() {
  return {{"name", "host CPU (the plan runs no Vulkan op)"}, {"slug", "host-cpu"}, {"driver", nullptr},
          {"hardware_threads", std::thread::hardware_concurrency()}};
}

void print_breakdown(const std::string& label, const json& b) {
  std::printf("\n%s per-op breakdown (one profiled run: %.2f ms wall, %.2f ms in ops):\n", label.c_str(),
              b["wall_ms"].get<double>(), b["ops_ms"].get<double>());
  for (auto& o : b["ops"])
    std::printf("  %-16s %10.3f ms %6.1f%%  %6lld calls  (%s)\n", o["op"].get<std::string>().c_str(), o["ms"].get<double>(),
                100 * o["share"].get<double>(), (long long)o["calls"].get<int64_t>(), o["timed_by"].get<std::string>().c_str());
}

void cmd_bench(const BenchArgs& a) {
  const std::vector<int64_t> lengths = parse_lengths(a.prompts);
  if (a.gen < 0 || a.gen > (1 << 24))
    fail("-n: the number of generated tokens must be >= 0 and <= 16777216 (0: no decode test), got {}", a.gen);
  if (lengths.empty() && a.gen == 0) fail("-p 0 and -n 0: no test to run");
  if (a.chunk < 0) fail("--prefill-chunk must be >= 0 (0: the whole prompt in one chunk)");
  if (a.tag_given && a.tag.empty()) fail("--tag '': give a name or leave the option out");
  if (a.runs < 1) fail("--runs must be >= 1");
  a.model.check();
  a.plan.check();
  if (!a.tag.empty()) check_name(a.tag, "--tag");
  std::vector<Peer> peers;
  for (auto& spec : a.peers) peers.push_back(parse_peer(spec));
  if (!peers.empty() && (!a.model.preset.empty() || !a.model.model.ends_with(".gguf")))
    fail("--peer: llama.cpp reads a GGUF file; --model {} is not one", a.model.preset.empty() ? quant::printable(a.model.model, 80)
                                                                                              : "(a preset)");
  check_output_dir(a.out);  // before the computation, not after it
  const ModelWeights w = a.model.load();
  auto dev = a.plan.open_device();
  const gpu::Plan plan = gpu::Plan::parse(a.plan.ops, dev.get());
  std::fprintf(stderr, "%s", plan.notes().c_str());
  gpu::PlanExecutor ex(plan, dev.get());

  std::vector<Test> tests;
  for (int64_t p : lengths) tests.push_back({fmt::format("pp{}", p), false, p});
  if (a.gen > 0) tests.push_back({fmt::format("tg{}", a.gen), true, a.gen});

  json report = {{"schema", "hybridlab.bench/1"},
                 {"device", dev ? exp::device_json(*dev) : host_device_json()},
                 {"commit", exp::git_commit()},
                 {"date", exp::now_iso()},
                 {"plan", plan.describe()},
                 {"model", {{"source", a.model.preset.empty() ? a.model.model : "preset " + a.model.preset},
                            {"origin", w.origin}, {"seed", a.model.preset.empty() ? json(nullptr) : json(a.model.seed)},
                            {"layers", w.cfg.n_layers}, {"vocab", w.cfg.vocab}, {"per_token", per_token_cost(w)}}},
                 {"prefill_chunk", a.chunk},
                 {"decode_replay", !a.no_replay && ex.can_capture()},
                 {"runs", a.runs},
                 {"warmup_runs", a.warmup},
                 {"warmup_ms", a.warmup_ms},
                 {"tokens", fmt::format("synthetic: uniform random ids in [0, vocab) from seed {}, the same every run; decode starts "
                                        "from one random token at position 0 and feeds each step's argmax to the next",
                                        a.token_seed)},
                 {"timing", std::string("wall clock per run, from the first token's embedding until the device has finished "
                                        "(prefill computes the logits of each chunk's last row only, as llama-bench; decode ") +
                                (dev && !a.no_replay && ex.can_capture() && dev->tune("decode.device_token")
                                     ? "downloads the first steps' ids one by one; from then on each replayed step embeds the step "
                                       "before's argmax on the device and those ids are downloaded together at the end of the run)"
                                     : "downloads one id per step)")},
                 {"breakdown_method", "one extra run per test with per-op profiling: Vulkan ops by timestamps around "
                                      "their dispatches, host ops by wall clock; not part of the timed runs; decode steps not replayed"},
                 {"tests", json::array()}};
  std::printf("hybridlab bench: %s, %d layers; plan %s; device %s%s; prefill chunk %lld; %d runs after %d warm-ups (more "
              "until %.0f ms of them); commit %s\n",
              report["model"]["source"].get<std::string>().c_str(), w.cfg.n_layers, plan.describe().c_str(),
              report["device"]["name"].get<std::string>().c_str(),
              dev ? (" (" + dev->info().driver_info + ")").c_str() : "", (long long)a.chunk, a.runs, a.warmup, a.warmup_ms,
              report["commit"].get<std::string>().c_str());

  if (dev) {
    const double floor = dispatch_floor_us(*dev);
    report["dispatch_floor_us"] = floor;
    report["dispatch_floor_method"] = "GPU time per dispatch of 512 chained 2048-value adds (each with the stream's barrier) "
                                      "in one submission, two timestamps around the chain; median of 5 after a warm-up";
    std::printf("dispatch floor: %.2f us of GPU time per dependent dispatch (512 chained adds of 2048 values)\n", floor);
  }
  Bench bench(a, w, ex, dev.get());
  std::vector<std::pair<std::string, json>> breakdowns;
  std::printf("\n%-8s %12s %24s %14s\n", "test", "tok/s", "min .. max", "device tok/s");
  for (const Test& t : tests) {
    // The memory plan of this test's forward passes: KV caches for every position it reaches, states on the device.
    ex.set_context_capacity(dev ? t.tokens + 1 : 0);
    bench.set_check_finite(true);
    const auto w0 = Clock::now();
    bench.run(t);  // warm-up: materialises and uploads the weights, compiles the pipelines; checks the logits
    bench.set_check_finite(false);
    // A second, unchecked, exactly as the timed runs go: whatever only they do (pipelines, captured segments) happens
    // before the clock starts, not in the first timed run. Then more until warmup_ms have passed since the checked one
    // ended: a GPU that idled runs its first prefills at under half speed, on the device clock too (the H100 and H200
    // benches of reports/*/prefill-attention.md).
    const auto w1 = Clock::now();
    int warm = 1;
    for (; warm < a.warmup; ++warm) bench.run(t);
    while (warm < kMaxWarmup && std::chrono::duration<double, std::milli>(Clock::now() - w1).count() < a.warmup_ms)
      bench.run(t), ++warm;
    const double warm_ms = std::chrono::duration<double, std::milli>(Clock::now() - w0).count();
    std::vector<double> tps, dev_tps;
    std::vector<int32_t> generated;
    uint64_t dispatches = 0, submits = 0, replayed = 0, barriers = 0;
    std::vector<double> record_ms;  // host ms per token inside the steps, per run
    std::vector<double> step_gpu_ms, between_ms;  // tg on a device: per token, per run
    for (int i = 0; i < a.runs; ++i) {
      const RunResult r = bench.run(t);
      tps.push_back(double(t.tokens) / r.wall_s);
      if (r.device_s > 0) dev_tps.push_back(double(t.tokens) / r.device_s);
      if (i == 0)
        generated = r.generated, dispatches = r.dispatches, submits = r.submits, replayed = r.replayed, barriers = r.barriers;
      record_ms.push_back(r.record_s * 1e3 / double(t.tokens));
      if (r.step_gpu_s >= 0) {
        step_gpu_ms.push_back(r.step_gpu_s * 1e3 / double(t.tokens));
        if (t.tokens > 1) between_ms.push_back(r.between_steps_s * 1e3 / double(t.tokens - 1));
      }
    }
    if (dev && !report.contains("resident")) {  // after the first warm-up: the weights are on the device
      const gpu::DeviceStats& st = dev->stats();
      report["resident"] = {{"buffers", st.resident_buffers}, {"blocks", st.resident_blocks}, {"bytes", st.resident_bytes},
                            {"method", "weights placed by Device::alloc_resident: tensors, device-memory blocks, bytes"}};
      std::printf("resident on the device: %llu weight tensors in %llu memory blocks, %.3f GB\n",
                  (unsigned long long)st.resident_buffers, (unsigned long long)st.resident_blocks, double(st.resident_bytes) * 1e-9);
    }
    const auto [lo, hi] = std::minmax_element(tps.begin(), tps.end());
    json tj = {{"label", t.label}, {"phase", t.decode ? "decode" : "prefill"}, {"tokens", t.tokens},
               {"tok_per_s", {{"median", median(tps)}, {"min", *lo}, {"max", *hi}, {"runs", tps}}},
               {"ms_per_token", 1e3 / median(tps)},
               {"dispatches", dispatches}, {"replayed_dispatches", replayed},
               {"dispatches_per_token", double(dispatches + replayed) / double(t.tokens)},
               {"recorded_dispatches_per_token", double(dispatches) / double(t.tokens)},
               {"barriers_per_token", double(barriers) / double(t.tokens)},
               {"context_capacity", ex.context_capacity()},
               {"submits", submits},
               {"host_record_ms_per_token", median(record_ms)},
               {"warmup", {{"runs", warm}, {"ms", warm_ms}}}};
    if (!dev_tps.empty()) tj["device_tok_per_s"] = {{"median", median(dev_tps)}, {"runs", dev_tps}};
    if (!step_gpu_ms.empty()) {
      tj["gpu_ms_per_token"] = median(step_gpu_ms);
      if (!between_ms.empty()) tj["gpu_gap_ms_between_tokens"] = median(between_ms);
      tj["gpu_time_method"] = "Vulkan timestamps before and after each decode step: the step's GPU time (from its first "
                              "command to its last), and the time from one step's end to the next one's start (the "
                              "argmax, the id's download, the host's turnaround), medians over the timed runs";
    }
    if (t.decode) tj["greedy_tokens"] = generated;  // the start token, then the greedy tokens of the first timed run
    if (!a.no_breakdown) tj["breakdown"] = bench.breakdown(t), breakdowns.emplace_back(t.label, tj["breakdown"]);
    std::printf("%-8s %12.2f %11.2f .. %-10.2f %14s\n", t.label.c_str(), median(tps), *lo, *hi,
                dev_tps.empty() ? "-" : fmt::format("{:.2f}", median(dev_tps)).c_str());
    if (!step_gpu_ms.empty() && !between_ms.empty())
      std::printf("%-8s GPU %.3f ms per step, %.3f ms from a step's end to the next one's start\n", t.label.c_str(),
                  median(step_gpu_ms), median(between_ms));
    std::fflush(stdout);
    report["tests"].push_back(tj);
  }
  for (auto& [label, b] : breakdowns) print_breakdown(label, b);

  // Peers on the same file, after hybridlab's runs (the same machine state), side by side.
  for (const Peer& p : peers) {
    json pj = run_peer(p, a.model.model, a.prompts, a.gen, a.runs);
    std::printf("\npeer %s (llama-bench %s %s):\n", p.label.c_str(), pj["llama_bench"][0].value("backends", "?").c_str(),
                pj["llama_bench"][0].value("build_commit", "?").c_str());
    for (auto& r : pj["llama_bench"]) {
      const std::string label = r["n_gen"].get<int64_t>() == 0 ? fmt::format("pp{}", r["n_prompt"].get<int64_t>())
                                                                : fmt::format("tg{}", r["n_gen"].get<int64_t>());
      std::string ratio;
      for (auto& t : report["tests"])
        if (t["label"] == label) ratio = fmt::format("   hybridlab / peer {:.2f}", t["tok_per_s"]["median"].get<double>() / r["avg_ts"].get<double>());
      std::printf("%-8s %12.2f +- %-8.2f%s\n", label.c_str(), r["avg_ts"].get<double>(), r.value("stddev_ts", 0.0), ratio.c_str());
    }
    report["peers"].push_back(pj);
  }

  const std::string dir = a.out + "/" + report["device"]["slug"].get<std::string>();
  const std::string path = dir + "/bench-" + (a.tag.empty() ? model_name(a.model) : a.tag) + ".json";
  check_output_dir(dir);
  std::ofstream f(path);
  if (!(f << report.dump(2) << "\n")) fail("cannot write '{}'", path);
  std::printf("\nwrote %s\n", path.c_str());
  if (dev && dev->ctx().validation_message_count())
    fail("{} Vulkan validation messages (first: {})", dev->ctx().validation_message_count(),
         dev->ctx().validation_messages().front());
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* b = app.add_subcommand("bench", "prefill and decode throughput of a plan (llama-bench style: pp512, tg128)");
  auto a = std::make_shared<BenchArgs>();
  a->model.add(b);
  a->plan.add(b, false);
  b->add_option("-p,--prompt", a->prompts, "prompt lengths, comma-separated (default 512; 0: no prompt test)");
  b->add_option("-n,--gen", a->gen, "greedy decode steps (default 128; 0: no decode test)")->check(kWhole);
  b->add_option("--prefill-chunk", a->chunk, "tokens per prefill step (default 512; 0: the whole prompt)")->check(kWhole);
  b->add_option("--runs", a->runs, "timed runs per test, after the warm-ups (default 3; the median is reported)")->check(kWhole);
  b->add_option("--warmup", a->warmup,
                "untimed runs per test before the timed ones (default 2, at least 1: the first checks the logits; more "
                "where the device's clocks ramp up over the first runs)")
      ->check(CLI::Range(1, 1000));
  b->add_option("--warmup-ms", a->warmup_ms,
                "and more untimed runs per test until this many ms have passed in those after the first (default 1000; "
                "at most 100 runs in all; 0: --warmup alone)")
      ->check(CLI::Range(0.0, 600000.0));
  b->add_option("--token-seed", a->token_seed, "seed of the synthetic token ids (default 1)")->check(kUnsigned);
  b->add_option("--out", a->out, "reports directory (default reports): writes <out>/<device-slug>/bench-<tag|model>.json");
  auto* tag = b->add_option("--tag", a->tag, "report name: bench-<tag>.json instead of bench-<model>.json");
  b->add_option("--peer", a->peers,
                "'LABEL=[KEY=VALUE ...] PATH': run llama.cpp's llama-bench at PATH (with that environment) on the same GGUF "
                "after hybridlab's runs, same prompts, decode length and runs; its rows go into the report (repeatable)");
  b->add_flag("--no-breakdown", a->no_breakdown, "skip the profiled run of each test (no per-op breakdown)");
  b->add_flag("--no-replay", a->no_replay,
              "decode every step through the forward pass (default: the second step is captured and the rest replay it)");
  b->callback([a, tag] {
    a->tag_given = tag->count() > 0;
    cmd_bench(*a);
  });
}

}  // namespace hl::cli
