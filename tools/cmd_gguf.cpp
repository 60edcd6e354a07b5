// `hybridlab convert` and `hybridlab synth`: GGUF files from an HF checkpoint or synthetic weights.
#include <cstdio>

#include "model/gguf_convert.h"
#include "model/runner.h"
#include "tools/commands.h"

namespace hl::cli {

namespace {

using Progress = std::function<void(const GgufTensorDesc&, quant::Type, double)>;

// One line per block as its last tensor is written (a full-size model takes a while).
Progress block_progress(const std::string& cmd, int n_layers) {
  auto seconds = std::make_shared<double>(0);
  return [=](const GgufTensorDesc& d, quant::Type, double s) {
    *seconds += s;
    if (d.name != "output.weight" && !d.name.ends_with(".ffn_down_shexp.weight")) return;
    const std::string what = d.layer < 0 ? "token_embd, output" : fmt::format("block {}/{}", d.layer + 1, n_layers);
    std::fprintf(stderr, "hybridlab %s: %s written in %.1f s\n", cmd.c_str(), what.c_str(), *seconds);
    *seconds = 0;
  };
}

void report(const std::string& cmd, const std::string& from, const std::string& out, const GgufWriteSummary& s) {
  std::printf("hybridlab %s: %s -> %s: %s in %.1f s\n", cmd.c_str(), from.c_str(), out.c_str(), s.describe().c_str(),
              s.seconds);
  std::printf("hybridlab %s: vocabulary %s\n", cmd.c_str(), s.vocab.c_str());
}

// The oracle over the first n layers of a GGUF file on a fixed 16-token prompt: the RMS of the hidden state after
// the embedding and after every layer (the check that synthetic scales keep activations in range).
void print_hidden_rms(const std::string& path, int n) {
  ModelWeights w = load_gguf(path);
  w.truncate_layers(n);
  std::vector<int32_t> tokens;
  for (int i = 0; i < 16; ++i) tokens.push_back(int32_t((int64_t(i) * 7919 + 13) % w.cfg.vocab));
  RefExecutor<float> ex;
  Forward<RefExecutor<float>> fwd(ex, w);
  fwd.set_observer([&](int i, const Mat<float>& h) {
    const double rms = std::sqrt(h.cast<double>().squaredNorm() / double(h.size()));
    const std::string what = i == 0 ? "embedding" : i <= n ? fmt::format("layer {} ({})", i - 1, w.cfg.is_full(i - 1) ? "full-attention" : "gated-deltanet") : "final norm";
    std::printf("hidden RMS after %-28s %.4f\n", (what + ":").c_str(), rms);
  });
  fwd.step(tokens, Phase::Prefill);
}

}  // namespace

void add_gguf_commands(CLI::App& app) {
  auto* convert = app.add_subcommand("convert", "write an HF checkpoint as a qwen35moe GGUF file (llama.cpp's transforms)");
  struct ConvertArgs {
    std::string model, out, quant = "f32";
  };
  auto c = std::make_shared<ConvertArgs>();
  convert->add_option("--model", c->model, "HF checkpoint directory (config.json + safetensors)")->required();
  convert->add_option("--out", c->out, "output .gguf file")->required();
  convert->add_option("--quant", c->quant, "f32, f16, q8_0 (convert_hf_to_gguf --outtype) or q4_k_m (llama-quantize)");
  convert->callback([c] {
    const GgufQuant q = gguf_quant_from_name(c->quant);
    check_output_file(c->out);
    const ModelWeights w = load_hf(c->model);
    GgufWriteOptions o = gguf_options_for_hf(c->model, q, w.cfg.vocab);
    o.on_tensor = block_progress("convert", w.cfg.n_layers);
    report("convert", c->model, c->out, write_gguf(w, c->out, o));
  });

  auto* synth = app.add_subcommand("synth", "write synthetic weights of a preset as a qwen35moe GGUF file, streaming");
  struct SynthArgs {
    std::string preset, out, quant = "q4_k_m";
    uint64_t seed = 0;
    int layers = 0, check = 0;
    bool random_blocks = false;
  };
  auto s = std::make_shared<SynthArgs>();
  synth->add_option("--preset", s->preset, "built-in config: qwen36-35b-a3b or tiny")->required();
  synth->add_option("--seed", s->seed, "seed of the synthetic weights")->check(kUnsigned);
  synth->add_option("--quant", s->quant, "f32, f16, q8_0 or q4_k_m (default)");
  synth->add_option("--out", s->out, "output .gguf file")->required();
  auto* layers = synth->add_option("--layers", s->layers, "write only the first N blocks")->check(kWhole);
  synth->add_flag("--random-blocks", s->random_blocks,
                  "quantized tensors as random blocks of the same spread, not quantized values: seconds instead of minutes "
                  "(benchmarks)");
  synth->add_option("--check", s->check, "then run the oracle over the first N layers of the file and print the "
                                         "hidden-state RMS after each")
      ->check(kWhole);
  synth->callback([s, layers] {
    GgufWriteOptions o;
    o.quant = gguf_quant_from_name(s->quant);
    ModelConfig cfg = ModelConfig::preset(s->preset);
    check_output_file(s->out);
    if (layers->count()) {
      if (s->layers < 1 || s->layers > cfg.n_layers)
        fail("--layers {}: the preset has {} layers (give 1 to {})", s->layers, cfg.n_layers, cfg.n_layers);
      cfg.n_layers = s->layers;
      cfg.layer_kinds.resize(size_t(s->layers));
    }
    if (s->check < 0 || s->check > cfg.n_layers) fail("--check {}: the file has {} layers", s->check, cfg.n_layers);
    o.name = fmt::format("synthetic {} seed {}{}", s->preset, s->seed, s->random_blocks ? " random blocks" : "");
    o.random_blocks = s->random_blocks;
    o.on_tensor = block_progress("synth", cfg.n_layers);
    report("synth", o.name, s->out, write_gguf(synth_gguf_weights(cfg, s->seed), s->out, o));
    if (s->check) print_hidden_rms(s->out, s->check);
  });
}

}  // namespace hl::cli
