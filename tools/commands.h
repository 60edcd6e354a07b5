// The hybridlab command line: each subcommand lives in its own file (tools/cmd_*.cpp) and registers
// itself on the app with a callback; main() (tools/hybridlab.cpp) only parses and reports errors.
#pragma once
#include <CLI/CLI.hpp>
#include <charconv>
#include <string>

#include "runtime/device.h"
#include "plan/plan.h"
#include "model/gguf_model.h"
#include "model/weights.h"

namespace hl::cli {

// Whole numbers exactly as typed. CLI11 alone reads "-1" into an unsigned seed as 2^64 - 1 and saturates an int64 option
// at 2^63 - 1, silently; these refuse anything that is not a number of the option's kind.
inline std::string whole_number_error(const std::string& s, bool is_unsigned) {
  const char* end = s.data() + s.size();
  if (is_unsigned) {
    uint64_t v = 0;
    const auto [p, ec] = std::from_chars(s.data(), end, v);
    if (ec == std::errc() && p == end) return "";
    return "'" + s + "' is not a non-negative whole number below 2^64";
  }
  int64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), end, v);
  if (ec == std::errc() && p == end) return "";
  return "'" + s + "' is not a whole number within 64 bits";
}
inline const CLI::Validator kWhole([](std::string& s) { return whole_number_error(s, false); }, "INT");
inline const CLI::Validator kUnsigned([](std::string& s) { return whole_number_error(s, true); }, "UINT");

// A file a command will write (--out FILE): checked before any work, so that a typo costs no computation. Its
// directory must exist and be writable, and the path must not be a directory.
void check_output_file(const std::string& path, const char* option = "--out");
// A directory a command will write reports into (--out DIR): created now (as it would be at the end), or an error.
void check_output_dir(const std::string& dir, const char* option = "--out");
// A report tag or other name that becomes part of a file name: letters, digits, '-', '_', '.', not starting with '.'.
void check_name(const std::string& name, const char* option);

// --model PATH | --preset NAME --seed S, and --layers N: the model a command runs.
struct ModelArgs {
  std::string model, preset;
  uint64_t seed = 0;
  int layers = 0;
  CLI::Option* layers_opt = nullptr;

  void add(CLI::App* app) {
    app->add_option("--model", model, "HF checkpoint directory (config.json + safetensors) or a qwen35moe .gguf file");
    app->add_option("--preset", preset, "synthetic weights for a built-in config: qwen36-35b-a3b or tiny");
    app->add_option("--seed", seed, "seed of the synthetic weights")->check(kUnsigned);
    layers_opt = app->add_option("--layers", layers, "run only the first N layers (1 to the model's layers)")->check(kWhole);
  }
  // Before anything is loaded: the arguments that need no model.
  void check() const {
    if (model.empty() == preset.empty()) fail("give exactly one of --model PATH or --preset NAME");
    if (layers_opt && layers_opt->count() && layers < 1) fail("--layers {}: give at least 1 layer", layers);
  }

  ModelWeights load() const {
    check();
    ModelWeights w = !preset.empty()        ? synthetic_weights(ModelConfig::preset(preset), seed)
                     : is_gguf_path(model) ? load_gguf(model)
                                           : load_hf(model);
    if (layers_opt && layers_opt->count()) w.truncate_layers(layers);
    return w;
  }
};

// --ops PLAN, --validate, --device: the plan a command runs and the device it needs.
struct PlanArgs {
  std::string ops, device;
  bool validate = false;
  CLI::Option* ops_opt = nullptr;

  void add(CLI::App* app, bool with_validate = true) {
    ops_opt = app->add_option("--ops", ops, "plan: op=variant,... ('*=vulkan' for every op's Vulkan default)");
    if (with_validate)
      app->add_flag("--validate", validate, "shadow every non-reference op with the reference; print per-op errors");
    app->add_option("--device", device, "Vulkan device: index or name substring (default: env HYBRIDLAB_DEVICE, "
                                        "else the first discrete/integrated GPU, else lavapipe)");
  }
  // An --ops given but empty is a mistake (a shell variable that expanded to nothing), not "run the oracle".
  void check() const {
    if (ops_opt && ops_opt->count() && ops.find_first_not_of(" \t,") == std::string::npos)
      fail("--ops '{}' names no op=variant pair ('*=reference' runs every op's reference)", ops);
  }
  bool active() const { return !ops.empty() || validate; }
  // The device the plan needs, if any.
  std::unique_ptr<gpu::Device> open_device() const {
    if (!device.empty() || gpu::Plan::needs_device(ops)) return std::make_unique<gpu::Device>(vk::ContextOptions{.device = device});
    return nullptr;
  }
};

void add_run_command(CLI::App& app);         // run (the oracle, or a plan with --ops/--validate)
void add_ops_commands(CLI::App& app);        // ops, devices
void add_experiment_commands(CLI::App& app);  // experiment, experiments
void add_model_commands(CLI::App& app);      // info, golden
void add_gguf_commands(CLI::App& app);       // convert, synth
void add_bench_command(CLI::App& app);       // bench (prefill and decode throughput)

}  // namespace hl::cli
