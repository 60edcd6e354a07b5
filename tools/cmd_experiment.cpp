// `hybridlab experiment NAME` and `hybridlab experiments`.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <string_view>

#include "experiments/harness.h"
#include "tools/commands.h"

namespace hl::cli {

namespace {

// "KEY=V1,V2,..." (decimal values) into sweep[KEY]. A one-line error for anything else.
void parse_sweep(const std::string& spec, std::map<std::string, std::vector<uint32_t>>* sweep) {
  const auto eq = spec.find('=');
  const std::string shown = quant::printable(spec, 80);
  if (eq == std::string::npos || eq == 0) fail("--sweep {}: expected KEY=V1,V2,... (a tunable and its values)", shown);
  const std::string key = spec.substr(0, eq);
  if (sweep->count(key)) fail("--sweep {}: {} given twice", shown, quant::printable(key, 60));
  std::vector<uint32_t> values;
  std::string_view rest = std::string_view(spec).substr(eq + 1);
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    uint32_t v = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size())
      fail("--sweep {}: {} is not an unsigned 32-bit value", shown, quant::printable(std::string(item), 40));
    if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  (*sweep)[key] = values;
}

}  // namespace

void add_experiment_commands(CLI::App& app) {
  auto* expc = app.add_subcommand("experiment", "run an experiment: every variant of its ops, checked and timed; writes reports/");
  struct Args {
    std::string name;
    exp::Options o;
    std::vector<std::string> sweep;
  };
  auto a = std::make_shared<Args>();
  expc->add_option("name", a->name, "experiment name (see `hybridlab experiments`)")->required();
  auto* quick = expc->add_flag("--quick", a->o.quick, "small shapes (the default on a CPU Vulkan device)");
  expc->add_flag("--full", a->o.full, "the model's full shapes even on a CPU Vulkan device")->excludes(quick);
  expc->add_option("--device", a->o.device, "Vulkan device: index or name substring");
  auto* variant = expc->add_option("--variant", a->o.only_variant, "run only this variant (and the reference)");
  auto* cases = expc->add_option("--cases", a->o.cases, "run only the cases whose label, or \"op label\", matches this regex (same inputs)");
  auto* tag = expc->add_option("--tag", a->o.tag,
                               "write reports/<device>/<name>-<tag>.{json,md} (a partial run beside the full report)");
  expc->add_option("--runs", a->o.runs, "timed runs per variant (median reported; at least 20 for reports)")
      ->check(kWhole)
      ->check(CLI::Range(1, 1000000));
  expc->add_option("--out", a->o.out_dir, "report directory (default reports)");
  expc->add_option("--chain", a->o.chain,
                    "time GPU variants as chains of N calls, each behind a barrier, per call (a decode stream's dependent "
                    "step; default: one call between two timestamps)")
      ->check(CLI::Range(0, 4096));
  expc->add_option("--peers", a->o.peers_file,
                   "peer rows measured in this run (scripts/llama_ops.py peers): shown beside the variants instead of the "
                   "quoted constants of experiments/anchors.json");
  expc->add_flag("--no-sweep", a->o.no_sweep, "each GPU variant at the device profile's tuning only (no tunable sweep)");
  expc->add_option("--sweep", a->sweep,
                   "KEY=V1,V2,...: sweep this tunable over these values instead of the experiment's own sweeps (repeat for "
                   "more keys; with --sweep-axes one at a time)");
  expc->add_flag("--sweep-axes", a->o.sweep_axes,
                 "each swept tunable varied alone, the others at the device profile's tuning (not their product)");
  auto* family = expc->add_option("--family", a->o.family, "time only the variants of this family (e.g. vulkan) and the reference");
  expc->add_flag("--gpu-only", a->o.gpu_only, "leave out the CPU variants other than the reference (which gives the truth)");
  expc->add_flag("--time-failing", a->o.time_failing,
                 "time variants whose outputs fail the tolerance too (diagnosis builds; the run still fails)");
  expc->add_flag("--dispatches", a->o.dispatches,
                 "also time each GPU variant's dispatches one by one (each alone between two timestamps), by pipeline");
  expc->callback([a, variant, cases, tag, family] {
    // Given but empty: a mistake (a shell variable that expanded to nothing), not "no filter".
    for (auto* opt : {variant, cases, tag, family})
      if (opt->count() && opt->as<std::string>().empty()) fail("{} '': give a value or leave the option out", opt->get_name());
    for (const std::string& spec : a->sweep) parse_sweep(spec, &a->o.sweep);
    const auto report = exp::run_experiment(a->name, a->o);
    if (const int failures = report.value("failures", 0))
      fail("{}: {} variant runs failed their numerics check (see the report)", a->name, failures);
  });
  app.add_subcommand("experiments", "list the experiments")->callback([] {
    for (auto& e : exp::experiments()) std::printf("%-10s %s\n", e.name.c_str(), e.description.c_str());
  });
}

}  // namespace hl::cli
