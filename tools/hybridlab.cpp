// hybridlab: the command line. `run` is a contract (external checks use exactly its flags).
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>

#include "io/safetensors.h"
#include "model/runner.h"
#include "op_cases.h"

using namespace hl;

namespace {

struct ModelArgs {
  std::string model, preset;
  uint64_t seed = 0;
  int layers = 0;

  void add(CLI::App* app) {
    app->add_option("--model", model, "HF checkpoint directory (config.json + safetensors)");
    app->add_option("--preset", preset, "synthetic weights for a built-in config: qwen36-35b-a3b or tiny");
    app->add_option("--seed", seed, "seed of the synthetic weights");
    app->add_option("--layers", layers, "run only the first N layers");
  }

  ModelWeights load() const {
    if (model.empty() == preset.empty()) fail("give exactly one of --model PATH or --preset NAME");
    ModelWeights w = model.empty() ? synthetic_weights(ModelConfig::preset(preset), seed) : load_hf(model);
    if (layers) w.truncate_layers(layers);
    return w;
  }
};

int cmd_run(const ModelArgs& m, const std::string& tokens_path, const std::string& out, const RunOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  const ModelWeights w = m.load();
  const auto tokens = read_token_file(tokens_path);
  const Mat<float> logits = run_reference(w, tokens, o);
  write_safetensors(out, {OutTensor::from_mat("logits", logits)},
                    {{"origin", w.origin}, {"precision", o.precision == Precision::F64 ? "f64" : "f32"}});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "hybridlab run: %zu tokens (%s), %d layers, logits [%lld, %lld] -> %s in %.2f s\n",
               tokens.size(), w.origin.c_str(), w.cfg.n_layers, (long long)logits.rows(), (long long)logits.cols(),
               out.c_str(), s);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hybridlab: a kernel playground for the Qwen3.6-35B-A3B hybrid model"};
  app.require_subcommand(1);

  auto* run = app.add_subcommand("run", "run the oracle over a token file and write every position's logits");
  ModelArgs margs;
  margs.add(run);
  std::string tokens, out, precision = "f32";
  RunOptions ro;
  run->add_option("--tokens", tokens, "token ids separated by whitespace")->required();
  run->add_option("--out", out, "output .safetensors (tensor 'logits', F32 [n_tokens, vocab])")->required();
  run->add_option("--prefill-chunk", ro.prefill_chunk, "prompt chunk size (0: one chunk)");
  run->add_option("--decode-from", ro.decode_from, "tokens [K, end) go one at a time through decode");
  run->add_option("--precision", precision, "f32 or f64")->check(CLI::IsMember({"f32", "f64"}));
  run->add_option("--ssm-chunk", ro.scan.chunk, "chunk size of the chunked delta rule (default 64)");

  auto* info = app.add_subcommand("info", "print a model's config");
  ModelArgs iargs;
  info->add_option("--model", iargs.model, "HF checkpoint directory");
  info->add_option("--preset", iargs.preset, "built-in config");

  auto* golden = app.add_subcommand("golden", "regenerate golden op tensors (inputs and oracle outputs)");
  std::string golden_dir = "golden/ops";
  uint64_t golden_seed = 20261130;
  golden->add_option("--out", golden_dir, "output directory");
  golden->add_option("--seed", golden_seed, "seed of the inputs");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (*run) {
      ro.precision = precision == "f64" ? Precision::F64 : Precision::F32;
      return cmd_run(margs, tokens, out, ro);
    }
    if (*info) {
      if (iargs.model.empty() == iargs.preset.empty()) fail("give exactly one of --model PATH or --preset NAME");
      const ModelConfig c =
          iargs.model.empty() ? ModelConfig::preset(iargs.preset) : ModelConfig::from_file(iargs.model + "/config.json");
      std::printf("%s\n", c.summary().c_str());
      return 0;
    }
    if (*golden) {
      write_op_goldens(golden_dir, golden_seed);
      std::printf("wrote %zu op cases to %s\n", op_cases().size(), golden_dir.c_str());
      return 0;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hybridlab: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
