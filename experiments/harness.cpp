#include "experiments/harness.h"
#include "experiments/cpu_ceilings.h"

#include <malloc.h>
#include <algorithm>
#include <cctype>
#include <chrono>
#include <regex>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include <omp.h>

#include "quant/error.h"

#ifdef HYBRIDLAB_HALIDE
#include "ops/halide/halide.h"
#endif

namespace hl::exp {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

std::vector<Part> op_parts(const std::string& op, const Context& cx) {
  const gpu::OpDef& def = gpu::Registry::get().op(op);
  if (!def.cases) fail("op {} has no cases", op);
  std::vector<Part> parts;
  for (Case& c : def.cases(cx.quick ? gpu::Scale::Quick : gpu::Scale::Full)) {
    auto it = std::find_if(parts.begin(), parts.end(), [&](const Part& p) { return p.group == c.group; });
    if (it == parts.end()) {
      parts.push_back(Part{op});
      parts.back().group = c.group;
      parts.back().tolerance = std::max(def.tolerance, 1e-7);
      it = parts.end() - 1;
    }
    it->cases.push_back(std::move(c));
  }
  return parts;
}

std::string git_commit() {
  if (const char* c = std::getenv("HYBRIDLAB_COMMIT")) return c;  // set where the tree travels without .git
  std::string out;
  if (FILE* p = popen("git rev-parse --short HEAD 2>/dev/null && git status --porcelain --untracked-files=no 2>/dev/null | head -1", "r")) {
    char buf[256];
    while (fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  const auto nl = out.find('\n');
  if (nl == std::string::npos) return "unknown";
  return out.substr(0, nl) + (out.size() > nl + 1 ? "-dirty" : "");
}

json device_json(const gpu::Device& dev) {
  const auto& i = dev.info();
  return {{"name", i.name},       {"slug", vk::device_slug(i.name)}, {"driver", i.driver_name},
          {"driver_info", i.driver_info}, {"vulkan", i.api_version_string()}, {"type", i.type_name()},
          {"profile", dev.profile().name()}, {"subgroup_size", i.subgroup_size},
          {"subgroup_pinned", i.pipeline_subgroup_size != 0},
          {"shared_memory", i.max_shared_memory}, {"cooperative_matrix", i.cooperative_matrix}};
}

std::string now_iso() {
  const auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

static std::string root_path(const std::string& rel) {
  if (const char* r = std::getenv("HYBRIDLAB_ROOT")) return std::string(r) + "/" + rel;
  return rel;
}

// Debian's python3 (where python3-matplotlib lives) unless HYBRIDLAB_PYTHON says otherwise.
static std::string python() {
  if (const char* p = std::getenv("HYBRIDLAB_PYTHON")) return p;
  return fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
}

const Experiment& experiment(const std::string& name) {
  std::string names;
  for (auto& e : experiments()) {
    if (e.name == name) return e;
    names += (names.empty() ? "" : ", ") + e.name;
  }
  fail("unknown experiment '{}' (experiments: {})", name, names);
}

static std::string report_dir(const gpu::Device& dev, const Options& opt) {
  return opt.out_dir + "/" + vk::device_slug(dev.info().name);
}

static json run_on(gpu::Device& dev, const Experiment& e, const Options& opt);

Ceilings load_or_measure_ceilings(gpu::Device& dev, const Options& opt) {
  const std::string path = report_dir(dev, opt) + "/bandwidth.json";
  if (!fs::exists(path)) {
    std::fprintf(stderr, "experiment: no %s yet: measuring the bandwidth ceilings first\n", path.c_str());
    Options o = opt;
    o.only_variant.clear(), o.cases.clear(), o.tag.clear(), o.peers_file.clear();
    o.no_sweep = o.sweep_axes = o.gpu_only = false;
    o.sweep.clear();
    o.family.clear();
    run_on(dev, experiment("bandwidth"), o);
  }
  std::ifstream f(path);
  json j = json::parse(f);
  Ceilings c;
  c.read_gbps = j.at("ceilings").at("read_GBps");
  c.copy_gbps = j.at("ceilings").at("copy_GBps");
  c.f32_tflops = j.at("ceilings").at("f32_TFLOPs");
  c.f16_matrix_tflops = j.at("ceilings").value("f16_matrix_TFLOPs", 0.0);
  c.source = fmt::format("bandwidth experiment of {} (commit {})", j.value("date", "?"), j.value("commit", "?"));
  if (j.contains("decode_size_reads"))
    for (const auto& r : j["decode_size_reads"].at("reads"))
      c.size_reads.emplace_back(r.at("MiB").get<double>() * 1048576.0, r.at("time_us").get<double>());
  std::sort(c.size_reads.begin(), c.size_reads.end());
  return c;
}

int timing_sets_count(double bytes, bool quick) {
  const double cache_bytes = 64.0 * (1 << 20);
  return int(std::clamp(std::ceil(2 * cache_bytes / std::max(bytes, 1.0)), 1.0, quick ? 8.0 : 256.0));
}

double same_size_read_us(const Ceilings& c, double bytes) {
  const auto& r = c.size_reads;
  if (r.empty() || bytes < r.front().first) return 0;
  for (size_t i = 1; i < r.size(); ++i)
    if (bytes <= r[i].first)
      return r[i - 1].second + (bytes - r[i - 1].first) / (r[i].first - r[i - 1].first) * (r[i].second - r[i - 1].second);
  return c.read_gbps > 0 ? r.back().second + (bytes - r.back().first) / (c.read_gbps * 1e3) : 0;
}

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : (v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]));
}

// The q-quantile of v (linear between the nearest ranks); 0 for none.
double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double at = q * double(v.size() - 1);
  const size_t i = size_t(at);
  return i + 1 < v.size() ? v[i] + (at - double(i)) * (v[i + 1] - v[i]) : v[i];
}

gpu::OpArgs clone_args(const gpu::OpArgs& a) {
  gpu::OpArgs c = a;
  for (auto& [n, t] : c.t) t = t.clone();
  return c;
}

// Error of every output and state of `got` against `want`.
json compare(const gpu::OpDef& def, const gpu::OpArgs& args, const gpu::OpArgs& got, const gpu::OpArgs& want,
             double* worst_rel) {
  json errs = json::object();
  // Caches: only rows [0, kv_len + T) are compared (T: the first input's rows, the tokens).
  const int64_t rows = args.p.count("kv_len") ? args.iparam("kv_len") + args.in(def.inputs.front()).rows() : -1;
  std::vector<std::string> names = def.outputs_set(want);
  names.insert(names.end(), def.states.begin(), def.states.end());
  *worst_rel = 0;
  for (auto& n : names) {
    const Tensor &g = got.t.at(n), &w = want.t.at(n);
    const bool is_state = std::find(def.states.begin(), def.states.end(), n) != def.states.end();
    const int64_t r = is_state && rows >= 0 ? rows : g.rows();
    if (g.type() == Tensor::Type::I32) {
      const int64_t bad = (g.i32().topRows(r).array() != w.i32().topRows(r).array()).count();
      errs[n] = {{"mismatched", bad}, {"of", r * g.cols()}};
      if (bad) *worst_rel = std::max(*worst_rel, 1.0);
      continue;
    }
    const Mat<float> gm = g.f32().topRows(r), wm = w.f32().topRows(r);
    if (!gm.allFinite()) {
      errs[n] = {{"nonfinite", gm.size() - gm.array().isFinite().count()}};
      *worst_rel = INFINITY;
      continue;
    }
    const double rel = rel_l2(gm, wm), mx = gm.size() ? max_abs(gm, wm) : 0;
    errs[n] = {{"rel_l2", rel}, {"max_abs", mx}};
    *worst_rel = std::max(*worst_rel, rel);
  }
  return errs;
}

// A part's sweeps: the experiment's own, or with --sweep the given keys that the part sweeps already or whose op it is.
static std::map<std::string, std::vector<uint32_t>> part_sweeps(const Part& p, const Options& opt) {
  if (opt.sweep.empty()) return p.sweeps;
  std::map<std::string, std::vector<uint32_t>> out;
  for (auto& [key, values] : opt.sweep)
    if (p.sweeps.count(key) || key.rfind(p.op + ".", 0) == 0) out[key] = values;
  return out;
}

// The sweep keys that apply to a variant: "op.<suffix>.param" for variant "family:<suffix>", "op.param", or a key the
// variant declares (add_rmsnorm_matmul_group's vulkan:fused_decode reads "add_rmsnorm_matmul_group.qmatvec_direct.*");
// a key of another op applies to every variant of the part (an op that runs that op's kernels, e.g.
// add_rmsnorm_moe_block).
std::vector<std::pair<std::string, std::vector<uint32_t>>> sweeps_for(const Part& p, const gpu::Variant& v, const Options& opt) {
  std::vector<std::pair<std::string, std::vector<uint32_t>>> out;
  const std::string suffix = v.name.substr(v.name.find(':') + 1);
  for (auto& [key, values] : part_sweeps(p, opt)) {
    if (key.rfind(p.op + ".", 0) != 0) {
      out.emplace_back(key, values);
      continue;
    }
    const std::string rest = key.substr(p.op.size() + 1);
    const auto dot = rest.find('.');
    const bool declared = std::any_of(v.tunables.begin(), v.tunables.end(), [&](const gpu::Tunable& t) { return t.key == key; });
    if (declared || dot == std::string::npos || rest.substr(0, dot) == suffix) out.emplace_back(key, values);
  }
  return out;
}



json roofline(const Cost& c, double seconds, const Ceilings& ceil, const Projection& proj, const std::string& prec, bool on_gpu) {
  json r;
  r["GBps"] = c.bytes / seconds / 1e9;
  r["TFLOPs"] = c.flops / seconds / 1e12;
  if (!on_gpu) return r;
  // f16: the measured matrix ceiling (cooperative matrices), else 4x the f32 rate (packed f16 arithmetic).
  const double peak_flops = (prec == "f16" ? (ceil.f16_matrix_tflops > 0 ? ceil.f16_matrix_tflops : ceil.f32_tflops * 4)
                                           : ceil.f32_tflops) * 1e12;
  const double t_mem = c.bytes / (ceil.read_gbps * 1e9), t_cmp = peak_flops > 0 ? c.flops / peak_flops : 0;
  const double floor = std::max(t_mem, t_cmp);
  r["bound"] = t_mem >= t_cmp ? "memory" : "compute";
  r["roofline_us"] = floor * 1e6;
  r["fraction_of_ceiling"] = floor / seconds;
  // Memory-bound: against a plain read of the same bytes chained on this device, what a kernel of that size can reach
  // here (a decode mat-vec's few MB cannot reach the ceiling: the read's fixed costs are most of its time).
  if (const double t = same_size_read_us(ceil, c.bytes); t > 0 && t_mem >= t_cmp) {
    r["same_size_read_us"] = t;
    r["of_same_size_read"] = t * 1e-6 / seconds;
  }
  const double rdna_floor = std::max(c.bytes / (proj.gbps * 1e9), c.flops / ((prec == "f16" ? proj.f16_tflops : proj.f32_tflops) * 1e12));
  r["rdna4_floor_us"] = rdna_floor * 1e6;
  r["rdna4_projected_us"] = rdna_floor / (floor / seconds) * 1e6;  // the same fraction of the R9700's roofline
  return r;
}

// A CPU row's roofline: against the host's ceilings at its thread count (cpu_ceilings.h), measured in this process;
// no RDNA4 projection (it projects GPU rows).
json cpu_roofline(const Cost& c, double seconds, int threads) {
  const CpuCeilings& cc = cpu_ceilings(threads);
  json r;
  r["GBps"] = c.bytes / seconds / 1e9;
  r["TFLOPs"] = c.flops / seconds / 1e12;
  const double t_mem = c.bytes / (cc.read_gbps * 1e9), t_cmp = c.flops / (cc.f32_gflops * 1e9), floor = std::max(t_mem, t_cmp);
  r["bound"] = t_mem >= t_cmp ? "memory" : "compute";
  r["roofline_us"] = floor * 1e6;
  r["fraction_of_ceiling"] = floor / seconds;
  r["rdna4_floor_us"] = nullptr;
  r["rdna4_projected_us"] = nullptr;
  return r;
}

json load_peers(const std::string& path) {
  std::ifstream f(path);
  if (!f) fail("--peers {}: cannot read it", quant::printable(path, 200));
  json j = json::parse(f, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("peers") || !j["peers"].is_array())
    fail("--peers {}: not a peers JSON (an object with a \"peers\" array)", quant::printable(path, 200));
  for (auto& p : j["peers"])
    if (!p.is_object() || !p.contains("experiment") || !p.contains("case") || !p.contains("device") ||
        !p.value("time_us", json()).is_number() || !(p["time_us"].get<double>() > 0))
      fail("--peers {}: a row without experiment, case, device or a positive time_us", quant::printable(path, 200));
  return j;
}

// The peers of one case: the rows measured in this call (--peers) where there are any, else the quoted constants of
// experiments/anchors.json (labelled with their source).
json peers_for(const json& measured, const std::string& experiment, const std::string& op, const std::string& label,
               const std::string& slug) {
  static const json anchors = [] {
    std::ifstream f(root_path("experiments/anchors.json"));
    return f ? json::parse(f) : json::object();
  }();
  const auto matching = [&](const json& src, bool measured) {
    json out = json::array();
    for (auto p : src.value("peers", json::array()))
      if (p.value("experiment", "") == experiment && p.value("case", "") == label && p.value("device", "") == slug &&
          p.value("op", op) == op) {
        p["measured"] = measured;
        out.push_back(p);
      }
    return out;
  };
  if (json m = matching(measured, true); !m.empty()) return m;
  return matching(anchors, false);
}

// --dispatches: `runs` calls of a variant with every dispatch alone between two timestamps; per pipeline (in the order
// of its first dispatch) its dispatches per call and the median over the calls of their summed time.
json dispatch_times(gpu::Device& dev, const std::function<void(int)>& call, int runs) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<double>> ns;
  std::map<std::string, int> calls;
  dev.take_dispatch_times();  // nothing stale
  for (int i = 0; i < runs; ++i) {
    dev.set_dispatch_profile(true);
    call(i);
    dev.set_dispatch_profile(false);
    std::map<std::string, double> sum;
    calls.clear();
    for (const auto& [name, t] : dev.take_dispatch_times()) {
      if (!ns.count(name) && !std::count(order.begin(), order.end(), name)) order.push_back(name);
      sum[name] += t;
      ++calls[name];
    }
    for (const auto& [name, t] : sum) ns[name].push_back(t);
  }
  json out = json::array();
  for (const std::string& name : order) out.push_back({{"pipeline", name}, {"calls", calls[name]}, {"us", median(ns[name]) * 1e-3}});
  return out;
}

// --cases: a regex over a case's label, or over "op label" (one op's cases where several ops share labels).
static bool case_chosen(const Options& opt, const std::string& op, const std::string& label) {
  if (opt.cases.empty()) return true;
  const std::regex re(opt.cases);
  return std::regex_search(label, re) || std::regex_search(op + " " + label, re);
}

void run_part(Context& cx, const std::string& exp_name, const Part& part, json& report, int* failures) {
  const auto& reg = gpu::Registry::get();
  const gpu::OpDef& def = reg.op(part.op);
  const std::string slug = vk::device_slug(cx.dev.info().name);
  const Projection proj;
  gpu::WeightStore host_ws(nullptr), dev_ws(&cx.dev);
  gpu::VariantCtx host_ctx{nullptr, &host_ws}, dev_ctx{&cx.dev, &dev_ws};
  std::vector<const gpu::Variant*> variants;
  for (auto* v : reg.variants(part.op)) {
    const bool listed = part.variants.empty() || std::count(part.variants.begin(), part.variants.end(), v->name);
    const bool chosen = (cx.opt.only_variant.empty() || v->name == cx.opt.only_variant || v->family == "reference") &&
                        (cx.opt.family.empty() || v->family == cx.opt.family || v->family == "reference");
    if (listed && chosen) variants.push_back(v);
  }
  for (auto& v : part.extra_variants) variants.push_back(&v);
  uint64_t seed = 1;
  // Progress lines: "[i/n] op case variant ...", one count per (case, variant) of this part.
  size_t n_runs = 0, i_run = 0;
  for (const Case& c : part.cases)
    if (case_chosen(cx.opt, part.op, c.label)) n_runs += variants.size();
  const auto tag = [&](const Case& c, const gpu::Variant* v) {
    return fmt::format("[{}/{}] {} {} {}", i_run, n_runs, part.op, c.label, v->name);
  };
  for (const Case& c : part.cases) {
    std::mt19937_64 rng(std::hash<std::string>{}(part.op + c.label) ^ seed++);
    if (!case_chosen(cx.opt, part.op, c.label)) continue;
    json jc = {{"op", part.op}, {"label", c.label}, {"shape", c.shape}, {"bytes", c.cost.bytes}, {"flops", c.cost.flops},
               {"results", json::array()}, {"peers", peers_for(cx.peers, exp_name, part.op, c.label, slug)}};
    const gpu::OpArgs inputs = c.inputs(rng);
    // What *=vulkan runs for these inputs: the family default, followed where it delegates (attention's vulkan:tiled
    // hands decode to vulkan:decode_split), so "the default" in the verdict is the kernel a plan would time.
    if (const gpu::Variant* dv = reg.family_default(part.op, "vulkan")) {
      const gpu::Variant& runs = reg.resolve(*dv, dev_ctx, inputs);
      jc["default_variant"] = runs.name;
      if (&runs != dv) jc["default_family_variant"] = dv->name;
    }
    // The reference: the truth for this case, and its CPU time.
    gpu::OpArgs want = clone_args(inputs);
    const auto& refv = reg.variant(part.op, "reference");
    // The first (cold) run gives the truth; the reference is then timed as the CPU variants are (below).
    refv.run(host_ctx, want);
    // Timing sets: inputs rotated so that repeated runs do not just hit the cache (timing_sets_count). Made once per
    // case, on first use, and shared by the reference, every variant and sweep point: fresh quantized weights at full
    // shapes cost seconds each to draw and upload, which had eaten most of a sweep's time limit.
    const int rot = timing_sets_count(c.cost.bytes, cx.opt.quick);
    std::vector<gpu::OpArgs> rotated;
    const auto timing_sets = [&] {
      if (rotated.empty())
        for (int i = 1; i < rot; ++i) rotated.push_back(c.inputs(rng));
      std::vector<gpu::OpArgs> sets{clone_args(inputs)};
      sets.insert(sets.end(), rotated.begin(), rotated.end());
      return sets;
    };
    // Warm-up: uploads and pipelines, then enough work (>= 0.3 s) for the clocks to ramp up (and the CPU's threads to be
    // running). Calls that may take seconds at full shapes (`capped`: the reference, a scalar CPU schedule, a Halide
    // Vulkan one): at least 2 warm-up runs but no more once their wall time passes 3 s, and the timed runs stop after 3
    // once they have taken 5 s of wall time. Then up to opt.runs timed calls over the sets; returns their ns, and the
    // warm-up's runs and work in *warm. time_one returns ns per call; calls_per_time: the calls each of its timings
    // covers (a chain's length), so the warm-up counts the work it did, not the chain's per-call time. Uncapped, the
    // work counts from the second pass over the sets on: a set's first run carries its one-time costs (uploads, first
    // touches: the MoE block's 453 MB expert stacks per set took ~17 ms a call), which met the 0.3 s with the clocks
    // still low (the block timed at 134 us chained, 31 after a longer warm-up, H100).
    struct Warmup {
      int runs = 0;
      double work_ns = 0, wall_ns = 0;
    };
    const auto measure = [&](std::vector<gpu::OpArgs>& sets, const std::function<double(gpu::OpArgs&)>& time_one, bool capped,
                             Warmup* warm, int calls_per_time = 1) {
      const int min_warm = capped ? 2 : int(sets.size()) + 2;
      double timed_ns = 0;
      *warm = {};
      // (No small cap on the count: at 0.2 ms a run, 200 runs left the H200's clocks low for the first sweep
      // point of a process, 2-4x slower than the same point later.)
      for (int i = 0; i < 20000 && (i < min_warm || warm->work_ns < 3e8); ++i) {
        const auto t0 = Clock::now();
        const double w = time_one(sets[size_t(i) % sets.size()]) * calls_per_time;
        if (capped || i >= int(sets.size())) warm->work_ns += w;
        ++warm->runs;
        warm->wall_ns += std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
        if (capped && i + 1 >= min_warm && warm->wall_ns > 3e9) break;
      }
      std::vector<double> ns;
      for (int i = 0; i < cx.opt.runs && !(capped && i >= 3 && timed_ns > 5e9); ++i) {
        const auto t0 = Clock::now();
        ns.push_back(time_one(sets[size_t(i % rot)]));
        timed_ns += std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
      }
      return ns;
    };
    const auto host_time = [](const std::function<void()>& call) {
      const auto t0 = Clock::now();
      call();
      return std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
    };
    for (const gpu::Variant* v : variants) {
      ++i_run;
      if (v->family == "reference") {
        // A steady clock around each call over the rotated sets, after the warm-up, as the CPU variants.
        std::vector<gpu::OpArgs> sets = timing_sets();
        Warmup warm;
        const std::vector<double> ns =
            measure(sets, [&](gpu::OpArgs& a) { return host_time([&] { refv.run(host_ctx, a); }); }, true, &warm);
        const double s = median(ns) * 1e-9;
        json r = {{"variant", v->name}, {"status", "reference"}, {"where", fmt::format("CPU, {} threads", omp_get_max_threads())},
                  {"timing", "steady clock around the call"},
                  {"time_us", {{"median", s * 1e6}, {"min", *std::min_element(ns.begin(), ns.end()) * 1e-3},
                               {"max", *std::max_element(ns.begin(), ns.end()) * 1e-3},
                               {"p10", percentile(ns, 0.1) * 1e-3}, {"p90", percentile(ns, 0.9) * 1e-3},
                               {"runs", ns.size()}, {"rotated_inputs", rot}, {"warmup_runs", warm.runs},
                               {"warmup_ms", warm.work_ns * 1e-6}, {"warmup_wall_ms", warm.wall_ns * 1e-6}}}};
        r.update(cpu_roofline(c.cost, s, omp_get_max_threads()));
        jc["results"].push_back(r);
        continue;
      }
      if (!v->takes(inputs)) continue;  // weights it does not read (e.g. another block type)
      if (cx.opt.gpu_only && !v->needs_device) {
        jc["results"].push_back({{"variant", v->name}, {"status", "skipped"}, {"why", "a CPU variant (--gpu-only)"}});
        continue;
      }
      if (auto why = reg.availability(*v, &cx.dev); !why.empty()) {
        jc["results"].push_back({{"variant", v->name}, {"status", "unavailable"}, {"why", why}});
        std::fprintf(stderr, "%s unavailable: %s\n", tag(c, v).c_str(), why.c_str());
        continue;
      }
      // Halide's scalar, serial "plain" CPU schedules take minutes per case at the model's full shapes (past
      // an experiment's time limit on the GPU machine): timed only at QUICK shapes unless asked for.
      if (!cx.quick && v->family == "halide" && v->name.ends_with(":plain") && !std::getenv("HYBRIDLAB_TIME_PLAIN")) {
        jc["results"].push_back({{"variant", v->name}, {"status", "skipped"},
                                 {"why", "scalar serial CPU schedule at full shapes (HYBRIDLAB_TIME_PLAIN=1 times it)"}});
        continue;
      }
      // Sweep points: the cartesian product of the variant's sweeps (one empty point if none); with --sweep-axes, the
      // case's tuning and each key's values alone beside it.
      std::vector<std::map<std::string, uint32_t>> points{c.tune};
      const auto sweeps = cx.opt.no_sweep ? decltype(sweeps_for(part, *v, cx.opt)){} : sweeps_for(part, *v, cx.opt);
      if (cx.opt.sweep_axes) {
        for (auto& [key, values] : sweeps)
          for (uint32_t val : values) {
            const auto it = c.tune.find(key);
            if (val == (it != c.tune.end() ? it->second : cx.dev.ctx().profile().get(key, ~0u))) continue;  // the base
            auto q = c.tune;
            q[key] = val;
            if (std::find(points.begin(), points.end(), q) == points.end()) points.push_back(q);
          }
      } else {
        for (auto& [key, values] : sweeps) {
          std::vector<std::map<std::string, uint32_t>> next;
          for (auto& p : points)
            for (uint32_t val : values) {
              auto q = p;
              q[key] = val;
              next.push_back(q);
            }
          points = next;
        }
      }
      for (auto& point : points) {
        vk::ScopedTuning tune(cx.dev.ctx().profile(), point);
        json r = {{"variant", v->name}, {"params", point}, {"where", "GPU"}};
        std::string err_text;
        try {
          gpu::OpArgs got = clone_args(inputs);
          v->run(dev_ctx, got);
          double worst = 0;
          r["errors"] = compare(def, inputs, got, want, &worst);
          r["rel_l2"] = worst;
          // A delegating variant (vulkan:auto) is held to the precision of the kernel it picked.
          const double tol = std::max({part.tolerance, v->precision_tolerance,
                                       gpu::Registry::get().resolve(*v, dev_ctx, inputs).precision_tolerance});
          r["status"] = worst <= tol ? "pass" : "fail";
        } catch (const std::exception& e) {
          r["status"] = "error";
          r["why"] = e.what();
          err_text = e.what();
        }
        if (r["status"] != "pass") ++*failures;
        if (r["status"] == "error" || (r["status"] == "fail" && !cx.opt.time_failing)) {
          jc["results"].push_back(r);
          std::fprintf(stderr, "%s %s %s\n", tag(c, v).c_str(), r["status"].get<std::string>().c_str(),
                       err_text.empty() ? fmt::format("(rel L2 {:.3e} > tolerance {:.1e})", r["rel_l2"].get<double>(), std::max(part.tolerance, v->precision_tolerance)).c_str()
                                        : err_text.c_str());
          continue;
        }
        std::vector<gpu::OpArgs> sets = timing_sets();
        // How a variant is timed: Vulkan timestamps around what it records into hybridlab's stream (GPU; for
        // Halide's Vulkan runtime, around its submissions to the same queue, Io::run in ops/halide/halide.cpp);
        // a steady clock around the call for CPU variants (needs_device false).
        const bool on_cpu = !v->needs_device;
        const bool halide_vk = v->family == "halide-vulkan";
        const bool host_timed = on_cpu;
        const bool capped = host_timed || halide_vk;  // may take seconds a call: few runs
        int threads = omp_get_max_threads();
#ifdef HYBRIDLAB_HALIDE
        if (v->family == "halide") threads = gpu::halide::cpu_threads();
#endif
        std::function<double(gpu::OpArgs&)> time_one = [&](gpu::OpArgs& a) {
          return cx.dev.time_ns([&] { v->run(dev_ctx, a); });
        };
        const int chain = cx.opt.chain;
        if (chain > 0)  // a chain of dependent calls over the rotated inputs, per call
          time_one = [&, chain](gpu::OpArgs& a) {
            const size_t first = size_t(&a - sets.data());
            return cx.dev.time_ns([&] {
                     for (int i = 0; i < chain; ++i) {
                       cx.dev.barrier();
                       v->run(dev_ctx, sets[(first + size_t(i)) % sets.size()]);
                     }
                   }) / chain;
          };
        if (host_timed) time_one = [&](gpu::OpArgs& a) { return host_time([&] { v->run(dev_ctx, a); }); };
        Warmup warm;
        std::vector<double> ns = measure(sets, time_one, capped, &warm, host_timed ? 1 : std::max(chain, 1));
        if (cx.opt.dispatches && !capped) r["dispatches"] = dispatch_times(cx.dev, [&](int i) { v->run(dev_ctx, sets[size_t(i % rot)]); },
                                                                 std::clamp(cx.opt.runs, 1, 5));
        const double s = median(ns) * 1e-9;
        r["time_us"] = {{"median", s * 1e6}, {"min", *std::min_element(ns.begin(), ns.end()) * 1e-3},
                        {"max", *std::max_element(ns.begin(), ns.end()) * 1e-3}, {"p10", percentile(ns, 0.1) * 1e-3},
                        {"p90", percentile(ns, 0.9) * 1e-3}, {"runs", ns.size()}, {"rotated_inputs", rot},
                        {"warmup_runs", warm.runs}, {"warmup_ms", warm.work_ns * 1e-6}, {"warmup_wall_ms", warm.wall_ns * 1e-6}};
        if (chain > 0 && !host_timed)
          r["timing"] = fmt::format("Vulkan timestamps around {} calls over the rotated inputs, each behind a barrier; per call", chain);
        if (on_cpu) {
          r["where"] = fmt::format("CPU, {} threads", threads);
          r["timing"] = "steady clock around the call";
        } else if (halide_vk) {
          r["where"] = "GPU (Halide's Vulkan runtime)";
          r["timing"] = "Vulkan timestamps around Halide's submissions (each kernel waited for by its runtime)";
        }
        // The f16 matrix roofline where the kernel that ran (a delegate's pick included) is on matrix units.
        const bool on_matrix_units = on_cpu ? false : reg.resolve(*v, dev_ctx, inputs).cooperative_matrices;
        r.update(on_cpu ? cpu_roofline(c.cost, s, threads)
                        : roofline(c.cost, s, cx.ceil, proj, on_matrix_units ? "f16" : part.flops_precision, true));
        jc["results"].push_back(r);
        std::string params;
        for (auto& [k, val] : point) params += fmt::format(" {}={}", k.substr(k.rfind('.') + 1), val);
        const std::string roof = r["fraction_of_ceiling"].is_number()
                                     ? fmt::format("{:5.1f}% of roofline", 100 * r["fraction_of_ceiling"].get<double>())
                                     : fmt::format("{:>18}", r["where"].get<std::string>());
        std::fprintf(stderr, "%s  %10.2f us  %8.1f GB/s  %7.3f TFLOP/s  %s  rel L2 %.1e%s\n", tag(c, v).c_str(), s * 1e6, r["GBps"].get<double>(), r["TFLOPs"].get<double>(), roof.c_str(),
                     r["rel_l2"].get<double>(), params.c_str());
        if (r.contains("dispatches")) {
          std::string parts;
          for (const json& d : r["dispatches"])
            parts += fmt::format("{}{} {}x {:.2f} us", parts.empty() ? "" : ", ", d["pipeline"].get<std::string>(),
                                 d["calls"].get<int>(), d["us"].get<double>());
          std::fprintf(stderr, "    dispatches alone: %s\n", parts.c_str());
        }
      }
    }
    report["cases"].push_back(jc);
  }
}

}  // namespace

void write_report(const json& report, const Options& opt) {
  const std::string dir = opt.out_dir + "/" + report["device"]["slug"].get<std::string>();
  fs::create_directories(dir);
  const std::string path =
      dir + "/" + report["experiment"].get<std::string>() + (opt.tag.empty() ? "" : "-" + opt.tag) + ".json";
  if (!(std::ofstream(path) << report.dump(1) << "\n")) fail("cannot write the report '{}'", path);
  const std::string cmd = fmt::format("{} '{}' '{}'", python(), root_path("scripts/report.py"), path);
  if (std::system(cmd.c_str()) != 0) fail("writing the markdown report failed: {}", cmd);
  std::fprintf(stderr, "experiment: wrote %s and %s\n", path.c_str(), (path.substr(0, path.size() - 5) + ".md").c_str());
}

void check_options(const Options& opt) {
  if (opt.runs < 1) fail("--runs {}: give at least 1 timed run", opt.runs);
  if (opt.quick && opt.full) fail("--quick and --full exclude each other");
  // The tag becomes part of a file name in the report directory: a name, never a path.
  if (!opt.tag.empty()) {
    const bool ok = opt.tag.size() <= 64 && opt.tag[0] != '.' && std::all_of(opt.tag.begin(), opt.tag.end(), [](unsigned char c) {
      return std::isalnum(c) || c == '-' || c == '_' || c == '.';
    });
    if (!ok) fail("--tag {}: a tag is a name (letters, digits, '-', '_', '.'; not a path), at most 64 characters",
                  quant::printable(opt.tag, 40));
  }
  if (!opt.cases.empty()) {
    try {
      std::regex re(opt.cases);
    } catch (const std::regex_error& e) {
      fail("--cases {}: not a valid regular expression ({})", quant::printable(opt.cases, 40), e.what());
    }
  }
  if (opt.no_sweep && opt.sweep_axes) fail("--no-sweep and --sweep-axes: give one of them");
  if (opt.no_sweep && !opt.sweep.empty()) fail("--no-sweep and --sweep: give one of them");
  for (auto& [key, values] : opt.sweep)
    if (values.empty()) fail("--sweep {}: give at least one value", quant::printable(key, 60));
  if (opt.out_dir.empty()) fail("--out '': give a report directory");
  std::error_code ec;
  fs::create_directories(opt.out_dir, ec);  // made now rather than after the computation, as write_report would
  if (ec || !fs::is_directory(opt.out_dir))
    fail("--out '{}': cannot create the report directory{}", opt.out_dir, ec ? ": " + ec.message() : "");
}

// --variant and --cases against the experiment's own variants and cases, before anything runs: a name that matches
// nothing would otherwise run only the reference (or nothing) and write that as the report.
static void check_filters(const Experiment& e, const Context& cx) {
  const Options& opt = cx.opt;
  const bool reduced = opt.no_sweep || opt.sweep_axes || !opt.sweep.empty() || opt.gpu_only || !opt.family.empty();
  if (opt.only_variant.empty() && opt.cases.empty() && !reduced) return;
  if (e.custom)
    fail("experiment {} times whole passes or the device: --variant, --cases, --family, --no-sweep, --sweep, --sweep-axes and "
         "--gpu-only apply to op experiments", e.name);
  const auto parts = e.parts(cx);
  std::vector<std::string> variants, labels;
  bool any_case = false;
  for (const Part& p : parts) {
    for (auto* v : gpu::Registry::get().variants(p.op))
      if (p.variants.empty() || std::count(p.variants.begin(), p.variants.end(), v->name)) variants.push_back(v->name);
    for (auto& v : p.extra_variants) variants.push_back(v.name);
    for (auto& c : p.cases) {
      labels.push_back(c.label);
      any_case |= case_chosen(opt, p.op, c.label);
    }
  }
  auto list = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    std::string s;
    for (auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  if (!opt.family.empty() && std::none_of(variants.begin(), variants.end(), [&](const std::string& n) {
        return n.starts_with(opt.family + ":");
      }))
    fail("--family {}: experiment {} has no variant of that family (its variants: {})", quant::printable(opt.family, 40), e.name,
         list(variants));
  if (!opt.only_variant.empty() && !std::count(variants.begin(), variants.end(), opt.only_variant))
    fail("--variant {}: experiment {} has no such variant (its variants: {})", quant::printable(opt.only_variant, 60), e.name,
         list(variants));
  for (auto& [key, values] : opt.sweep) {
    bool swept = false;
    std::vector<std::string> own;
    for (const Part& p : parts) {
      swept |= part_sweeps(p, opt).count(key) > 0;
      for (auto& [k, v] : p.sweeps) own.push_back(k);
    }
    if (!swept)
      fail("--sweep {}: not a tunable of experiment {}'s ops (its sweeps: {})", quant::printable(key, 60), e.name,
           own.empty() ? std::string("none") : list(own));
    try {
      cx.dev.ctx().profile().get(key);
    } catch (const std::exception&) {
      fail("--sweep {}: no such tunable (hybridlab ops --tunables lists them)", quant::printable(key, 60));
    }
  }
  if (!opt.cases.empty()) {
    if (!any_case)
      fail("--cases {}: matches none of experiment {}'s cases ({} shapes: {})", quant::printable(opt.cases, 40), e.name,
           cx.quick ? "QUICK" : "full", list(labels));
  }
  // A partial run writes beside the full report, never over it.
  if (opt.tag.empty())
    fail("--variant/--cases/--family/--no-sweep/--sweep/--sweep-axes/--gpu-only: a partial run needs --tag NAME (it writes {}-NAME.*, beside the full report)",
         e.name);
}

json run_experiment(const std::string& name, const Options& opt) { return run_experiment(experiment(name), opt); }

json run_experiment(const Experiment& e, const Options& opt) {
  check_options(opt);
  // Freed blocks stay in the process's heap: glibc otherwise hands a freed block of 128 KiB or more back to the OS and
  // the next call faults it in again page by page, so a CPU call's time depended on the allocator's history (the
  // attention reference's decode at QUICK shapes: 2.45 ms against 0.28 ms, from its per-call copies of the KV cache).
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  gpu::Device dev(vk::ContextOptions{.device = opt.device});
  return run_on(dev, e, opt);
}

// The smallest op this harness can time: a 4-value residual add (vulkan:elementwise) through the same path
// as every variant (output allocation, dispatch, barrier, timestamp pair), median of 50 after 10 warm-up runs.
// GPU times near it measure that path, not the kernel (on the H200 the small Q4_K mat-vecs sit at ~11-13 us).
// With --chain, the same add timed as the variants are: chains of that many calls, each behind a barrier, per call.
double timing_floor_us(gpu::Device& dev, int chain) {
  const gpu::Variant& add = gpu::Registry::get().variant("add", "vulkan:elementwise");
  gpu::WeightStore ws(&dev);
  gpu::VariantCtx ctx{&dev, &ws};
  const gpu::OpArgs args{{{"a", Tensor::from(Mat<float>::Ones(1, 4))}, {"b", Tensor::from(Mat<float>::Ones(1, 4))}}, {}, {}};
  std::vector<double> ns;
  for (int i = 0; i < 60; ++i) {
    gpu::OpArgs a = args;
    const double t = chain > 0 ? dev.time_ns([&] {
                                   for (int j = 0; j < chain; ++j) {
                                     dev.barrier();
                                     add.run(ctx, a);
                                   }
                                 }) / chain
                               : dev.time_ns([&] { add.run(ctx, a); });
    if (i >= 10) ns.push_back(t);
  }
  return median(ns) * 1e-3;
}

static json run_on(gpu::Device& dev, const Experiment& e, const Options& opt) {
  const std::string& name = e.name;
  const bool cpu_device = dev.info().type == VK_PHYSICAL_DEVICE_TYPE_CPU;
  Context cx{dev, opt, Ceilings{}, opt.quick || (cpu_device && !opt.full), json::object()};
  check_filters(e, cx);
  if (!opt.peers_file.empty()) cx.peers = load_peers(opt.peers_file);
  if (name != "bandwidth") cx.ceil = load_or_measure_ceilings(dev, opt);
  json report = {{"schema", "hybridlab.experiment/1"},
                 {"experiment", e.name},
                 {"description", e.description},
                 {"device", device_json(dev)},
                 {"host", {{"threads", omp_get_max_threads()}, {"hardware_threads", std::thread::hardware_concurrency()}}},
                 {"commit", git_commit()},
                 {"date", now_iso()},
                 {"quick", cx.quick},
                 {"runs", opt.runs},
                 {"cases", json::array()}};
  if (!opt.cases.empty()) report["cases_filter"] = opt.cases;
  if (opt.chain > 0) report["chain"] = opt.chain;
  if (opt.no_sweep) report["no_sweep"] = true;
  if (opt.sweep_axes) report["sweep_axes"] = true;
  if (!opt.sweep.empty()) report["sweep"] = opt.sweep;
  if (opt.gpu_only) report["gpu_only"] = true;
  if (!opt.family.empty()) report["family"] = opt.family;
  if (!opt.peers_file.empty()) report["peers_about"] = cx.peers.value("about", opt.peers_file);
  const Projection proj;
  report["projection"] = {{"device", proj.device}, {"GBps", proj.gbps}, {"f32_TFLOPs", proj.f32_tflops}, {"f16_TFLOPs", proj.f16_tflops},
                          {"method", "rdna4_projected_us = max(bytes / 640 GB/s, flops / peak) divided by the fraction of this "
                                     "device's roofline the variant reached here: a projection, not a measurement"}};
  std::fprintf(stderr, "experiment %s on %s (%s shapes)\n", e.name.c_str(), dev.info().name.c_str(), cx.quick ? "QUICK" : "full");
  int failures = 0;
  if (e.custom) {
    e.custom(cx, report);
  } else {
    report["ceilings"] = {{"read_GBps", cx.ceil.read_gbps}, {"copy_GBps", cx.ceil.copy_gbps}, {"f32_TFLOPs", cx.ceil.f32_tflops},
                          {"f16_matrix_TFLOPs", cx.ceil.f16_matrix_tflops}, {"source", cx.ceil.source}};
    report["timing_floor_us"] = timing_floor_us(dev, opt.chain);
    for (const Part& p : e.parts(cx)) {
      report["tolerances"][p.op] = p.tolerance;
      run_part(cx, e.name, p, report, &failures);
    }
  }
  // The CPU ceilings the CPU rows were divided by (those measured in this process, per thread count).
  for (int threads : {omp_get_max_threads()
#ifdef HYBRIDLAB_HALIDE
                      , gpu::halide::cpu_threads()
#endif
       })
    if (cpu_ceilings_measured(threads)) {
      const CpuCeilings& cc = cpu_ceilings(threads);
      json j = {{"threads", cc.threads}, {"read_GBps", cc.read_gbps}, {"cache_read_GBps", cc.cache_read_gbps},
                {"f32_GFLOPs", cc.f32_gflops}, {"buffer_MiB", cc.buffer_mib}};
      bool seen = false;
      for (auto& x : report["cpu_ceilings"]) seen |= x["threads"] == cc.threads;
      if (!seen) report["cpu_ceilings"].push_back(j);
    }
  report["failures"] = failures;
  write_report(report, opt);  // report.py prints each case's verdict
  if (dev.ctx().validation_message_count())
    fail("{} Vulkan validation messages (first: {})", dev.ctx().validation_message_count(), dev.ctx().validation_messages().front());
  return report;
}

}  // namespace hl::exp
