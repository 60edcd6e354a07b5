// `hybridlab run`: a contract (external checks use exactly its flags). Without --ops it runs the oracle
// (f32 or f64); with --ops or --validate it runs the plan executor (f32) and reports the variants used.
#include <chrono>
#include <cstdio>

#include "plan/executor.h"
#include "io/safetensors.h"
#include "model/runner.h"
#include "tools/commands.h"

namespace hl::cli {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Wall time of every layer in every step (a prefill chunk or a decode token), averaged per layer kind.
// The first step of a layer includes materialising its weights (synthesising or converting them).
struct LayerTimer {
  const ModelConfig* cfg = nullptr;
  Clock::time_point last;
  std::vector<std::vector<double>> steps;  // [step][layer]
  // Waits for the device, if the plan has one: its ops are recorded and run asynchronously, so the host's clock
  // alone would time the recording of a layer, not its work.
  std::function<void()> sync;

  void on_hidden(int i) {
    if (sync) sync();
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
        // Milliseconds with 3 significant digits: a decode step of a small model takes microseconds per layer,
        // which a fixed "0.000 s" rounded away.
        const char* kind = k == LayerKind::FullAttention ? "full-attention" : "gated-deltanet";
        if (n) line += fmt::format("  {} {:.3g} ms/layer", kind, 1e3 * sum / n);
      }
      std::fprintf(stderr, "hybridlab run: step %zu (%lld tokens):%s\n", s + 1, (long long)tokens, line.c_str());
    }
  }
};

// The plan's logits against the oracle's (f32, same tokens and chunking): relative L2 and argmax agreement over
// the prompt rows and over the decode rows separately (decode rows carry every earlier step's state).
void check_oracle(const Mat<float>& logits, const Mat<float>& ref, int64_t decode_from) {
  // NaN compares unequal to everything: a relative L2 of NaN and an argmax agreement of 1 would read as a pass.
  const int64_t bad_plan = logits.size() - logits.array().isFinite().count(), bad_ref = ref.size() - ref.array().isFinite().count();
  if (bad_plan || bad_ref)
    fail("check-oracle: no comparison: the plan's logits hold {} NaN/Inf values, the oracle's {}", bad_plan, bad_ref);
  const int64_t n = logits.rows(), K = decode_from < 0 ? n : std::min(decode_from, n);
  auto line = [&](const char* what, int64_t r0, int64_t rows) {
    if (rows <= 0) return;
    const auto a = logits.middleRows(r0, rows), b = ref.middleRows(r0, rows);
    std::fprintf(stderr, "check-oracle: %-14s rows %4lld..%-4lld relative L2 %.3e, max abs %.3e, argmax agreement %.4f\n", what,
                 (long long)r0, (long long)(r0 + rows - 1), rel_l2(a, b), max_abs(a, b), argmax_agreement(a, b));
  };
  line("prompt", 0, K);
  line("decode steps", K, n - K);
  line("all", 0, n);
}

void cmd_run(const ModelArgs& m, const PlanArgs& pa, const std::string& tokens_path, const std::string& out, RunOptions o,
            bool timings, bool oracle) {
  const auto t0 = Clock::now();
  // Everything that needs no model is checked before the model is loaded and the computation starts.
  m.check();
  pa.check();
  check_output_file(out);
  if (oracle && !pa.active()) fail("--check-oracle compares a plan (--ops) with the oracle; give --ops");
  if (pa.active() && o.precision != Precision::F32) fail("--ops and --validate run in f32 (--precision f64 is the oracle's alone)");
  const auto tokens = read_token_file(tokens_path);
  if (o.decode_from > int64_t(tokens.size()))
    fail("--decode-from {} is beyond the {} tokens", o.decode_from, tokens.size());
  const ModelWeights w = m.load();
  LayerTimer timer{&w.cfg, Clock::now(), {}};
  if (timings) o.on_hidden = [&](int i) { timer.on_hidden(i); };
  Mat<float> logits;
  std::string plan_text = "oracle";
  if (!pa.active()) {
    logits = run_reference(w, tokens, o);
  } else {
    auto dev = pa.open_device();
    const gpu::Plan plan = gpu::Plan::parse(pa.ops, dev.get());
    plan_text = plan.describe();
    std::fprintf(stderr, "%s", plan.notes().c_str());
    if (dev) std::fprintf(stderr, "hybridlab run: device %s (%s)\n", dev->info().name.c_str(), dev->info().driver_info.c_str());
    gpu::PlanExecutor ex(plan, dev.get(), o.scan, pa.validate);
    ex.set_allow_nonfinite(o.allow_nonfinite);
    if (timings && dev) timer.sync = [d = dev.get()] { d->sync(); };
    logits = run_with(ex, w, tokens, o);
    std::fprintf(stderr, "hybridlab run: plan %s\n%s", plan_text.c_str(), ex.usage_report().c_str());
    if (oracle) {
      RunOptions ro = o;
      ro.on_hidden = nullptr;
      ro.allow_nonfinite = true;  // a NaN in the oracle's logits is reported by check_oracle, beside the plan's
      const auto t1 = Clock::now();
      const Mat<float> ref = run_reference(w, tokens, ro);
      std::fprintf(stderr, "check-oracle: the oracle (f32, host) took %.1f s\n", seconds_since(t1));
      check_oracle(logits, ref, o.decode_from);
    }
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
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto* run = app.add_subcommand("run", "run the model over a token file and write every position's logits");
  struct Args {
    ModelArgs model;
    PlanArgs plan;
    std::string tokens, out, precision = "f32";
    RunOptions ro;
    bool timings = false, oracle = false;
  };
  auto a = std::make_shared<Args>();
  a->model.add(run);
  a->plan.add(run);
  run->add_option("--tokens", a->tokens, "token ids separated by whitespace")->required();
  run->add_option("--out", a->out, "output .safetensors (tensor 'logits', F32 [n_tokens, vocab])")->required();
  run->add_option("--prefill-chunk", a->ro.prefill_chunk, "prompt chunk size (0: one chunk)")->check(kWhole);
  // -1 is RunOptions' "no decode", not a value to give: a negative K is refused like one beyond the tokens.
  auto* decode_from = run->add_option("--decode-from", a->ro.decode_from,
                                      "tokens [K, end) go one at a time through decode (0 <= K <= tokens)")
                          ->check(kWhole);
  run->add_option("--precision", a->precision, "f32 or f64 (the oracle only)")->check(CLI::IsMember({"f32", "f64"}));
  run->add_option("--ssm-chunk", a->ro.scan.chunk, "chunk size of the chunked delta rule (default 64)")
      ->check(CLI::Range(1, 1 << 16));
  run->add_flag("--timings", a->timings, "print the wall time per layer kind of every step");
  run->add_flag("--allow-nonfinite", a->ro.allow_nonfinite,
                "let NaN/Inf values flow through the ops into the logits (default: the first op that makes one, or "
                "logits that hold one, stop the run with an error naming it)");
  run->add_flag("--check-oracle", a->oracle,
                "then run the oracle (f32, host) on the same tokens and print the logits' relative L2 and argmax "
                "agreement, prompt and decode rows apart (no per-op shadow: cheaper than --validate at full size)");
  run->callback([a, decode_from] {
    if (decode_from->count() && a->ro.decode_from < 0)
      fail("--decode-from {}: give a token index from 0 to the number of tokens", a->ro.decode_from);
    if (a->ro.prefill_chunk < 0) fail("--prefill-chunk {}: give 0 (one chunk) or a positive chunk size", a->ro.prefill_chunk);
    a->ro.precision = a->precision == "f64" ? Precision::F64 : Precision::F32;
    cmd_run(a->model, a->plan, a->tokens, a->out, a->ro, a->timings, a->oracle);
  });
}

}  // namespace hl::cli
