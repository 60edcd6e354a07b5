// hybridlab: the command line. `run` is a contract (external checks use exactly its flags).
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>

#include "experiments/harness.h"
#include "gpu/plan_executor.h"
#include "io/safetensors.h"
#include "model/runner.h"
#include "op_cases.h"

using namespace hl;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

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
  void print(const RunOptions& o, int64_t n_tokens) const {
    const int64_t K = o.decode_from < 0 ? n_tokens : o.decode_from;
    const int64_t chunk = o.prefill_chunk ? o.prefill_chunk : std::max<int64_t>(K, 1);
    for (size_t s = 0; s < steps.size(); ++s) {
      const int64_t t0 = int64_t(s) * chunk, tokens = t0 < K ? std::min(chunk, K - t0) : 1;
      std::string line;
      for (LayerKind k : {LayerKind::LinearAttention, LayerKind::FullAttention}) {
        double sum = 0;
        int n = 0;
        for (int i = 0; i < cfg->n_layers; ++i)
          if (cfg->layer_kinds[size_t(i)] == k) sum += steps[s][size_t(i)], ++n;
        if (n) line += fmt::format("  {} {:.3f} s/layer", k == LayerKind::FullAttention ? "full-attention" : "gated-deltanet", sum / n);
      }
      std::fprintf(stderr, "hybridlab run: step %zu (%lld tokens):%s\n", s + 1, (long long)tokens, line.c_str());
    }
  }
};

struct PlanArgs {
  std::string ops, device;
  bool validate = false;

  void add(CLI::App* app) {
    app->add_option("--ops", ops, "plan: op=variant,... ('*=vulkan' for every op's Vulkan default)");
    app->add_flag("--validate", validate, "shadow every non-reference op with the reference; print per-op errors");
    app->add_option("--device", device, "Vulkan device: index or name substring (default: env HYBRIDLAB_DEVICE, "
                                        "else the first discrete/integrated GPU, else lavapipe)");
  }
  bool active() const { return !ops.empty() || validate; }
  // The device the plan needs, if any.
  std::unique_ptr<gpu::Device> open_device() const {
    if (!device.empty() || gpu::Plan::needs_device(ops)) return std::make_unique<gpu::Device>(vk::ContextOptions{.device = device});
    return nullptr;
  }
};

int cmd_run(const ModelArgs& m, const PlanArgs& pa, const std::string& tokens_path, const std::string& out, RunOptions o,
            bool timings) {
  const auto t0 = Clock::now();
  const ModelWeights w = m.load();
  const auto tokens = read_token_file(tokens_path);
  LayerTimer timer{&w.cfg, Clock::now(), {}};
  if (timings) o.on_hidden = [&](int i) { timer.on_hidden(i); };
  Mat<float> logits;
  std::string plan_text = "oracle";
  if (!pa.active()) {
    logits = run_reference(w, tokens, o);
  } else {
    if (o.precision != Precision::F32) fail("--ops and --validate run in f32 (--precision f64 is the oracle's alone)");
    auto dev = pa.open_device();
    const gpu::Plan plan = gpu::Plan::parse(pa.ops, dev.get());
    plan_text = plan.describe();
    std::fprintf(stderr, "%s", plan.notes().c_str());
    if (dev) std::fprintf(stderr, "hybridlab run: device %s (%s)\n", dev->info().name.c_str(), dev->info().driver_info.c_str());
    gpu::PlanExecutor ex(plan, dev.get(), o.scan, pa.validate);
    logits = run_with(ex, w, tokens, o);
    std::fprintf(stderr, "hybridlab run: plan %s\n%s", plan_text.c_str(), ex.usage_report().c_str());
    if (pa.validate) {
      std::fprintf(stderr, "validate: per-op error of each variant against the reference on the same inputs\n%s",
                   ex.validation_report().c_str());
      RunOptions ro = o;
      ro.on_hidden = nullptr;
      const Mat<float> ref = run_reference(w, tokens, ro);
      std::fprintf(stderr, "validate: final logits vs an all-reference run: relative L2 %.3e, max abs %.3e, argmax agreement %.4f\n",
                   rel_l2(logits, ref), max_abs(logits, ref), argmax_agreement(logits, ref));
    }
    if (dev && dev->ctx().validation_message_count())
      fail("{} Vulkan validation messages (first: {})", dev->ctx().validation_message_count(),
           dev->ctx().validation_messages().front());
  }
  if (timings) timer.print(o, int64_t(tokens.size()));
  write_safetensors(out, {OutTensor::from_mat("logits", logits)},
                    {{"origin", w.origin}, {"plan", plan_text}, {"precision", o.precision == Precision::F64 ? "f64" : "f32"}});
  std::fprintf(stderr, "hybridlab run: %zu tokens (%s), %d layers, logits [%lld, %lld] -> %s in %.2f s\n", tokens.size(),
               w.origin.c_str(), w.cfg.n_layers, (long long)logits.rows(), (long long)logits.cols(), out.c_str(),
               seconds_since(t0));
  return 0;
}

int cmd_ops(const std::string& device) {
  std::unique_ptr<gpu::Device> dev;
  std::string why;
  try {
    dev = std::make_unique<gpu::Device>(vk::ContextOptions{.device = device});
    std::printf("device: %s (%s, profile %s)\n\n", dev->info().name.c_str(), dev->info().driver_info.c_str(),
                dev->profile().name().c_str());
  } catch (const std::exception& e) {
    if (!device.empty()) throw;
    why = e.what();
    std::printf("device: none (%s)\n\n", why.c_str());
  }
  const auto& r = gpu::Registry::get();
  for (auto& op : r.ops()) {
    std::printf("%s: %s\n", op.name.c_str(), op.summary.c_str());
    for (auto* v : r.variants(op.name)) {
      const std::string avail = r.availability(*v, dev.get());
      std::printf("  %-24s %-10s %s%s%s\n", v->name.c_str(), avail.empty() ? "available" : "UNAVAILABLE",
                  v->summary.c_str(), v->family_default && v->family != "reference" ? " [default]" : "",
                  avail.empty() ? "" : (" (" + avail + ")").c_str());
    }
  }
  return 0;
}

int cmd_devices() {
  const auto devs = vk::list_devices();
  for (auto& d : devs) std::printf("%u: %s\n%s\n", d.index, d.name.c_str(), d.summary().c_str());
  if (devs.empty()) fail("no Vulkan devices");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hybridlab: a kernel playground for the Qwen3.6-35B-A3B hybrid model"};
  app.require_subcommand(1);

  auto* run = app.add_subcommand("run", "run the model over a token file and write every position's logits");
  ModelArgs margs;
  margs.add(run);
  PlanArgs pargs;
  pargs.add(run);
  std::string tokens, out, precision = "f32";
  RunOptions ro;
  run->add_option("--tokens", tokens, "token ids separated by whitespace")->required();
  run->add_option("--out", out, "output .safetensors (tensor 'logits', F32 [n_tokens, vocab])")->required();
  run->add_option("--prefill-chunk", ro.prefill_chunk, "prompt chunk size (0: one chunk)");
  run->add_option("--decode-from", ro.decode_from, "tokens [K, end) go one at a time through decode");
  run->add_option("--precision", precision, "f32 or f64 (the oracle only)")->check(CLI::IsMember({"f32", "f64"}));
  run->add_option("--ssm-chunk", ro.scan.chunk, "chunk size of the chunked delta rule (default 64)");
  bool timings = false;
  run->add_flag("--timings", timings, "print the wall time per layer kind of every step");

  auto* ops = app.add_subcommand("ops", "list the ops, their variants, and which run on the device");
  std::string ops_device;
  ops->add_option("--device", ops_device, "Vulkan device: index or name substring");

  app.add_subcommand("devices", "list the Vulkan devices");

  auto* expc = app.add_subcommand("experiment", "run an experiment: every variant of its ops, checked and timed; writes reports/");
  std::string exp_name;
  exp::Options eo;
  expc->add_option("name", exp_name, "experiment name (see `hybridlab experiments`)")->required();
  expc->add_flag("--quick", eo.quick, "small shapes (the default on a CPU Vulkan device)");
  expc->add_flag("--full", eo.full, "the model's full shapes even on a CPU Vulkan device");
  expc->add_option("--device", eo.device, "Vulkan device: index or name substring");
  expc->add_option("--variant", eo.only_variant, "run only this variant (and the reference)");
  expc->add_option("--runs", eo.runs, "timed runs per variant (median reported; at least 20 for reports)");
  expc->add_option("--out", eo.out_dir, "report directory (default reports)");
  app.add_subcommand("experiments", "list the experiments");

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
      return cmd_run(margs, pargs, tokens, out, ro, timings);
    }
    if (*ops) return cmd_ops(ops_device);
    if (app.got_subcommand("devices")) return cmd_devices();
    if (*expc) {
      const auto report = exp::run_experiment(exp_name, eo);
      const int failures = report.value("failures", 0);
      if (failures) fail("{}: {} variant runs failed their numerics check (see the report)", exp_name, failures);
      return 0;
    }
    if (app.got_subcommand("experiments")) {
      for (auto& e : exp::experiments()) std::printf("%-10s %s\n", e.name.c_str(), e.description.c_str());
      return 0;
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
