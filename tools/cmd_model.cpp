// `hybridlab info` (a model's config) and `hybridlab golden` (regenerate golden/ops/).
#include <cstdio>

#include "model/config.h"
#include "op_cases.h"
#include "tools/commands.h"

namespace hl::cli {

void add_model_commands(CLI::App& app) {
  auto* info = app.add_subcommand("info", "print a model's config");
  auto m = std::make_shared<ModelArgs>();
  info->add_option("--model", m->model, "HF checkpoint directory");
  info->add_option("--preset", m->preset, "built-in config");
  info->callback([m] {
    if (m->model.empty() == m->preset.empty()) fail("give exactly one of --model PATH or --preset NAME");
    const ModelConfig c = m->model.empty() ? ModelConfig::preset(m->preset) : ModelConfig::from_file(m->model + "/config.json");
    std::printf("%s\n", c.summary().c_str());
  });

  auto* golden = app.add_subcommand("golden", "regenerate golden op tensors (inputs and oracle outputs)");
  struct Args {
    std::string dir = "golden/ops";
    uint64_t seed = 20261130;
  };
  auto g = std::make_shared<Args>();
  golden->add_option("--out", g->dir, "output directory");
  golden->add_option("--seed", g->seed, "seed of the inputs");
  golden->callback([g] {
    write_op_goldens(g->dir, g->seed);
    std::printf("wrote %zu op cases to %s\n", op_cases().size(), g->dir.c_str());
  });
}

}  // namespace hl::cli
