// The experiment harness: an experiment declares its cases (shapes), the op and variants they exercise,
// the bytes and flops each case must move and compute (the napkin math, written once), and a tolerance;
// the harness draws fresh inputs, computes the reference once, checks every variant against it, times
// the ones that pass (Vulkan timestamps, warm-up, median of >= 20 runs, inputs rotated past the cache),
// and writes reports/<device-slug>/<experiment>.{json,md} with the roofline and an RDNA4 projection.
#pragma once
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ops/cases.h"

namespace hl::exp {

// An experiment's cases are its ops' own (OpDef::cases, ops/<op>/cases.cpp).
using gpu::Case;
using gpu::Cost;
using gpu::randn;
using gpu::random_weight;
using gpu::weight;

// One op of an experiment: its cases and which variants run (empty: all the op's variants).
struct Part {
  std::string op;
  std::string group;  // the cases' group (Case::group), for the report
  std::vector<Case> cases;
  double tolerance = 1e-5;  // relative L2 against the reference; above it the variant is "fail" (not timed)
  std::vector<std::string> variants;
  // Variants that are not in the registry (a prototype under test, a deliberately wrong one in tests):
  // checked and timed like the registered ones.
  std::vector<gpu::Variant> extra_variants;
  std::string flops_precision = "f32";  // which compute ceiling applies: "f32" or "f16"
  // Tunables swept for the variants that have them: key -> values (each value is a separate result row).
  std::map<std::string, std::vector<uint32_t>> sweeps;
};

struct Options {
  bool quick = false;  // small shapes (default on a CPU Vulkan device unless full)
  bool full = false;
  std::string device;  // selector
  std::string out_dir = "reports";
  std::string only_variant;  // run just this variant (and the reference)
  std::string cases;         // regex: run only the cases whose label, or "op label", it matches (inputs unchanged)
  std::string tag;           // report files <experiment>-<tag>.{json,md} instead of <experiment>.*
  int runs = 20;
  // GPU variants timed as chains of this many calls, each behind a barrier (the cost of one dependent step of a
  // decode stream: launch, ramp and drain included, the timestamp pair's cost spread over the chain); 0: one call
  // between a timestamp pair.
  int chain = 0;
  // Peer rows measured in the same device call (scripts/llama_ops.py writes them): shown beside the variants in place
  // of experiments/anchors.json's quoted constants for every case they cover.
  std::string peers_file;
  // Each GPU variant at this device profile's tuning only, no tunable sweep (a sweep point costs ~1 s of warm-up at
  // full shapes); and CPU variants other than the reference left out: a run that fits a device call's time.
  bool no_sweep = false;
  // Each swept tunable varied alone, the others at the profile's tuning: the sum of the value counts, not their
  // product (a first look at a wide sweep that would not fit a device call).
  bool sweep_axes = false;
  // --sweep KEY=V1,V2,...: these tunables and values instead of the experiment's own sweeps, on the parts that sweep
  // the key already or whose op the key names.
  std::map<std::string, std::vector<uint32_t>> sweep;
  std::string family;  // time only this family's variants (e.g. vulkan), and the reference
  bool gpu_only = false;
  bool time_failing = false;  // time variants whose outputs fail the tolerance too (diagnosis; still counted as failures)
  // Each timed GPU variant also run with every dispatch alone between two timestamps: its dispatches' times by
  // pipeline (which part of a multi-dispatch variant takes the time).
  bool dispatches = false;
};

struct Ceilings {
  double read_gbps = 0, copy_gbps = 0, f32_tflops = 0;
  double f16_matrix_tflops = 0;  // 0: not measured (no cooperative matrices)
  std::string source;  // where they came from (the bandwidth report and its date)
  // The bandwidth experiment's reads of decode sizes: (bytes, us per read) of a plain coalesced read chained as a
  // decode stream chains its kernels, ascending in bytes (empty where the report has none).
  std::vector<std::pair<double, double>> size_reads;
};

// Input sets a case's timed runs cycle through, so that repeated runs do not hit the cache (L2: 60 MB on the H200) as a
// decode stream reads each weight once per token: enough to pass twice 64 MiB, at most 256 (8 on QUICK shapes, for CI's
// time; at 8 the decode mat-vecs' weights, 0.6 to 5 MB, stayed in the cache).
int timing_sets_count(double bytes, bool quick);

// What a plain chained read of `bytes` takes on the device (us): interpolated linearly in bytes between the measured
// sizes, past the largest at the read ceiling; 0 below the smallest (its fixed costs are not measured) or without them.
double same_size_read_us(const Ceilings& c, double bytes);

// Published rates of the Radeon AI PRO R9700 (RDNA4), for the labelled projection.
struct Projection {
  std::string device = "Radeon AI PRO R9700 (RDNA4)";
  double gbps = 640, f32_tflops = 47.8, f16_tflops = 191;
};

struct Context {
  gpu::Device& dev;
  Options opt;
  Ceilings ceil;
  bool quick;
  nlohmann::json peers = nlohmann::json::object();  // the --peers file's rows, loaded once
};

struct Experiment {
  std::string name, description;
  // Either parts (op experiments, run by the harness) or a custom body that fills the report's cases.
  std::function<std::vector<Part>(const Context&)> parts;
  std::function<void(Context&, nlohmann::json& report)> custom;
};

const std::vector<Experiment>& experiments();  // experiments/all.cpp
const Experiment& experiment(const std::string& name);  // one-line error listing the names

// Runs one experiment: terminal progress and summary, then the JSON and markdown reports. Returns the
// JSON report. Exit status for the command: 0 when every variant passed or was unavailable.
// The options are checked before anything runs (check_options): runs >= 1, a tag that is a name, a --variant that
// names a variant of the experiment's ops, a --cases regex that is valid and matches a case, a writable report
// directory; any of them wrong is a one-line error naming the option.
nlohmann::json run_experiment(const std::string& name, const Options& opt);
nlohmann::json run_experiment(const Experiment& e, const Options& opt);

// The options that need no device (runs, tag, regex syntax, the report directory).
void check_options(const Options& opt);

// The bandwidth ceilings of this device: reports/<slug>/bandwidth.json, measured first if missing.
Ceilings load_or_measure_ceilings(gpu::Device& dev, const Options& opt);

// The op's cases at the context's scale (Quick or Full), one Part per case group, held to the op's tolerance.
std::vector<Part> op_parts(const std::string& op, const Context& cx);
std::string git_commit();  // "abc1234" or "abc1234-dirty"
std::string now_iso();     // UTC, ISO 8601
nlohmann::json device_json(const gpu::Device& dev);
void write_report(const nlohmann::json& report, const Options& opt);  // json + md (+ plots)

}  // namespace hl::exp
