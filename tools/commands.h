// The hybridlab command line: each subcommand lives in its own file (tools/cmd_*.cpp) and registers
// itself on the app with a callback; main() (tools/hybridlab.cpp) only parses and reports errors.
#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "model/gguf_model.h"
#include "model/weights.h"

namespace hl::cli {

// --model PATH | --preset NAME --seed S, and --layers N: the model a command runs.
struct ModelArgs {
  std::string model, preset;
  uint64_t seed = 0;
  int layers = 0;

  void add(CLI::App* app) {
    app->add_option("--model", model, "HF checkpoint directory (config.json + safetensors) or a qwen35moe .gguf file");
    app->add_option("--preset", preset, "synthetic weights for a built-in config: qwen36-35b-a3b or tiny");
    app->add_option("--seed", seed, "seed of the synthetic weights");
    app->add_option("--layers", layers, "run only the first N layers");
  }

  ModelWeights load() const {
    if (model.empty() == preset.empty()) fail("give exactly one of --model PATH or --preset NAME");
    ModelWeights w = !preset.empty()        ? synthetic_weights(ModelConfig::preset(preset), seed)
                     : is_gguf_path(model) ? load_gguf(model)
                                           : load_hf(model);
    if (layers) w.truncate_layers(layers);
    return w;
  }
};


void add_run_command(CLI::App& app);         // run (the oracle, or a plan with --ops/--validate)
void add_ops_commands(CLI::App& app);        // ops, devices
void add_experiment_commands(CLI::App& app);  // experiment, experiments
void add_model_commands(CLI::App& app);      // info, golden
void add_gguf_commands(CLI::App& app);       // convert, synth

}  // namespace hl::cli
