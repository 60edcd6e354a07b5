// `hybridlab info` (a model's config) and `hybridlab golden` (regenerate golden/ops/).
#include <cstdio>
#include <map>

#include "model/config.h"
#include "model/gguf_model.h"
#include "model/gguf_vocab.h"
#include "quant/gguf.h"
#include "quant/blocks.h"
#include "ops/cases.h"
#include "tools/commands.h"

namespace hl::cli {

void add_model_commands(CLI::App& app) {
  auto* info = app.add_subcommand("info", "print a model's config");
  auto m = std::make_shared<ModelArgs>();
  info->add_option("--model", m->model, "HF checkpoint directory or .gguf file");
  info->add_option("--preset", m->preset, "built-in config");
  info->callback([m] {
    m->check();
    if (!m->model.empty() && is_gguf_path(m->model)) {  // the config from its metadata, and its tensor types
      ModelWeights w = load_gguf(m->model);
      std::printf("%s\n", w.cfg.summary().c_str());
      std::map<std::string, std::pair<int, double>> types;  // type -> (tensors, bytes)
      for_each_gguf_tensor(w, [&](const GgufTensorDesc&, WeightRef& slot) {
        if (!slot.src) return;  // an optional tensor the file lacks (tied output)
        auto& [n, bytes] = types[quant::type_name(slot.storage_type())];
        ++n;
        bytes += double(quant::row_bytes(slot.storage_type(), slot.cols)) * double(slot.rows);
      });
      int n = 0;
      double bytes = 0;
      for (auto& [t, v] : types) n += v.first, bytes += v.second;
      std::printf("%d tensors, %.1f MB of tensor data:", n, bytes * 1e-6);
      for (auto& [t, v] : types) std::printf(" %d %s (%.1f MB)", v.first, t.c_str(), v.second * 1e-6);
      std::printf("\n");
      const quant::Reader file(m->model);
      const auto vocab = read_gguf_vocab(file.metadata(), w.cfg.vocab);
      std::printf("vocabulary: %s\n", vocab ? vocab->describe().c_str() : "none (llama.cpp will not load this file)");
      return;
    }
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
  golden->add_option("--seed", g->seed, "seed of the inputs")->check(kUnsigned);
  golden->callback([g] {
    check_output_dir(g->dir);
    write_op_goldens(g->dir, g->seed);
    std::printf("wrote %zu op cases to %s\n", op_cases().size(), g->dir.c_str());
  });
}

}  // namespace hl::cli
