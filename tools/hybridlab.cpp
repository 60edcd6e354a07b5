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

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Wall time of every layer in every step (a prefill chunk or a decode token), averaged per layer kind.
// The first step of a layer includes materialising its weights (synthesising or converting them).
struct LayerTimer {
  const ModelConfig* cfg = nullptr;
  Clock::time_point last;
  std::vector<std::vector<double>> steps;  // [step][layer]

  void on_hidden(int i) {
    const auto now = Clock::now();
    if (i == 0) steps.emplace_back(size_t(cfg->n_layers), 0.0);
    if (i >= 1 && i <= cfg->n_layers) steps.back()[size_t(i - 1)] = std::chrono::duration<double>(now - last).count();
    last = now;
  }
  void print(const std::vector<int64_t>& step_tokens) const {
    for (size_t s = 0; s < steps.size(); ++s) {
      std::string line;
      for (LayerKind k : {LayerKind::LinearAttention, LayerKind::FullAttention}) {
        double sum = 0;
        int n = 0;
        for (int i = 0; i < cfg->n_layers; ++i)
          if (cfg->layer_kinds[size_t(i)] == k) sum += steps[s][size_t(i)], ++n;
        if (n) line += fmt::format("  {} {:.3f} s/layer", k == LayerKind::FullAttention ? "full-attention" : "gated-deltanet", sum / n);
      }
      std::fprintf(stderr, "hybridlab run: step %zu (%lld tokens):%s\n", s + 1, (long long)step_tokens[s], line.c_str());
    }
  }
};

int cmd_run(const ModelArgs& m, const std::string& tokens_path, const std::string& out, RunOptions o, bool timings) {
  const auto t0 = Clock::now();
  const ModelWeights w = m.load();
  const auto tokens = read_token_file(tokens_path);
  LayerTimer timer{&w.cfg, Clock::now(), {}};
  if (timings) o.on_hidden = [&](int i) { timer.on_hidden(i); };
  const Mat<float> logits = run_reference(w, tokens, o);
  if (timings) {
    std::vector<int64_t> step_tokens;
    const int64_t K = o.decode_from < 0 ? int64_t(tokens.size()) : o.decode_from;
    const int64_t chunk = o.prefill_chunk ? o.prefill_chunk : std::max<int64_t>(K, 1);
    for (int64_t t = 0; t < K; t += chunk) step_tokens.push_back(std::min(chunk, K - t));
    step_tokens.resize(timer.steps.size(), 1);
    timer.print(step_tokens);
  }
  write_safetensors(out, {OutTensor::from_mat("logits", logits)},
                    {{"origin", w.origin}, {"precision", o.precision == Precision::F64 ? "f64" : "f32"}});
  const double s = seconds_since(t0);
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
  bool timings = false;
  run->add_flag("--timings", timings, "print the wall time per layer kind of every step");

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
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {  // one line, like every other error
    std::fprintf(stderr, "hybridlab: error: %s (see --help)\n", e.what());
    return 2;
  }
  try {
    if (*run) {
      ro.precision = precision == "f64" ? Precision::F64 : Precision::F32;
      return cmd_run(margs, tokens, out, ro, timings);
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
