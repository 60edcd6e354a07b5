// forward: whole-model prefill and decode throughput (tok/s) for a plan, with the per-op time breakdown
// (Vulkan ops by timestamps, host ops by wall clock), dispatches per token, host<->device traffic and
// any per-token fallback. Models: the tiny model (golden/hf-tiny) and, with full shapes, the first 4
// layers (3 gated-deltanet + 1 full-attention) of the full-size preset with synthetic weights.
// Plans: the all-reference plan (the oracle's ops on the CPU) and three Vulkan plans (see run()); each Vulkan
// plan's logits are compared with the reference plan's on the same tokens.
#include <chrono>

#include "experiments/harness.h"
#include "plan/executor.h"
#include "model/forward.h"

namespace hl::exp {

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Model {
  std::string name;
  ModelWeights w;
  int64_t prompt, decode;
};

json breakdown(const std::map<std::string, gpu::PlanExecutor::OpTime>& times, double wall_s, int64_t tokens) {
  json ops = json::array();
  double sum = 0;
  for (auto& [op, t] : times) sum += t.ns;
  for (auto& [op, t] : times)
    ops.push_back({{"op", op}, {"ms", t.ns * 1e-6}, {"share", sum > 0 ? t.ns / sum : 0}, {"calls_per_token", double(t.calls) / tokens},
                   {"timed_on", t.gpu ? "GPU timestamps" : "host wall clock"}});
  std::sort(ops.begin(), ops.end(), [](const json& a, const json& b) { return a["ms"] > b["ms"]; });
  return {{"ops", ops}, {"op_sum_ms", sum * 1e-6}, {"wall_ms", wall_s * 1e3}};
}

json run_plan(Context& cx, const Model& m, const std::string& spec, std::mt19937_64& rng, Mat<float>* logits_out) {
  const gpu::Plan plan = gpu::Plan::parse(spec, &cx.dev);
  gpu::PlanExecutor ex(plan, &cx.dev);
  std::uniform_int_distribution<int32_t> tok(0, m.w.cfg.vocab - 1);
  std::vector<int32_t> prompt(size_t(m.prompt));
  for (auto& t : prompt) t = tok(rng);
  std::vector<int32_t> gen(size_t(m.decode));
  for (auto& t : gen) t = tok(rng);
  {  // warm-up: weights materialised and uploaded, pipelines built
    Forward<gpu::PlanExecutor> fwd(ex, m.w);
    ex.to_host(fwd.step(prompt, Phase::Prefill));
    ex.to_host(fwd.step({gen[0]}, Phase::Decode));
  }
  ex.set_profiling(true);
  json best;
  double best_prefill = 1e30, best_decode = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    Forward<gpu::PlanExecutor> fwd(ex, m.w);
    ex.reset_op_times();
    const auto d0 = cx.dev.stats();
    auto t0 = Clock::now();
    Mat<float> logits = ex.to_host(fwd.step(prompt, Phase::Prefill));
    const double tp = std::chrono::duration<double>(Clock::now() - t0).count();
    const json bp = breakdown(ex.op_times(), tp, m.prompt);
    const auto d1 = cx.dev.stats();
    ex.reset_op_times();
    t0 = Clock::now();
    for (int32_t t : gen) ex.to_host(fwd.step({t}, Phase::Decode));
    const double td = std::chrono::duration<double>(Clock::now() - t0).count();
    const json bd = breakdown(ex.op_times(), td, m.decode);
    const auto d2 = cx.dev.stats();
    if (tp < best_prefill) {
      best_prefill = tp;
      best["prefill"] = {{"tokens", m.prompt}, {"seconds", tp}, {"tok_per_s", double(m.prompt) / tp}, {"breakdown", bp},
                         {"dispatches_per_token", double(d1.dispatches - d0.dispatches) / double(m.prompt)},
                         {"dispatches", d1.dispatches - d0.dispatches},
                         {"upload_MB", double(d1.upload_bytes - d0.upload_bytes) / 1e6},
                         {"download_MB", double(d1.download_bytes - d0.download_bytes) / 1e6}};
      if (logits_out) *logits_out = logits;
    }
    if (td < best_decode) {
      best_decode = td;
      best["decode"] = {{"tokens", m.decode}, {"seconds", td}, {"tok_per_s", double(m.decode) / td}, {"breakdown", bd},
                        {"dispatches_per_token", double(d2.dispatches - d1.dispatches) / double(m.decode)},
                        {"upload_MB", double(d2.upload_bytes - d1.upload_bytes) / 1e6},
                        {"download_MB", double(d2.download_bytes - d1.download_bytes) / 1e6}};
    }
  }
  best["plan"] = spec.empty() ? "all reference" : spec;
  best["variants"] = plan.describe();
  best["prefill_per_token_fallback"] = ex.prefill_fallback();
  best["usage"] = ex.usage_report();
  return best;
}

void run(Context& cx, json& report) {
  std::vector<Model> models;
  const char* root = std::getenv("HYBRIDLAB_ROOT");
  models.push_back({"tiny (golden/hf-tiny)", load_hf(std::string(root ? root : ".") + "/golden/hf-tiny/model"), cx.quick ? 64 : 512,
                    cx.quick ? 8 : 32});
  if (!cx.quick) {
    ModelWeights w = synthetic_weights(ModelConfig::preset("qwen36-35b-a3b"), 1);
    w.truncate_layers(4);
    models.push_back({"qwen36-35b-a3b, first 4 layers (synthetic f32 weights)", std::move(w), 512, 16});
  }
  report["cases"] = json::array();
  for (const Model& m : models) {
    std::fprintf(stderr, "forward: %s, prompt %lld, decode %lld\n", m.name.c_str(), (long long)m.prompt, (long long)m.decode);
    json c = {{"label", m.name}, {"config", m.w.cfg.summary()}, {"layers", m.w.cfg.n_layers}, {"results", json::array()}};
    // Plans: the oracle; the Vulkan prefill before the batched kernels (MoE and the SSM scan one token at a
    // time, flash attention); every op's Vulkan family default (route-packed MoE, chunked scan, tiled
    // attention, fused gdn_prep); the same with the GDN preparation unfused (ssm_conv, slices, l2norms,
    // ssm_gates as separate ops); and the fastest Vulkan variant per op as the ssm_scan and attention
    // experiments measured it.
    const std::vector<std::string> plans = {
        "", "*=vulkan,moe_experts=vulkan:per_token,ssm_scan=vulkan:per_token,attention=vulkan:flash", "*=vulkan",
        "*=vulkan,gdn_prep=reference", "*=vulkan,ssm_scan=vulkan:block_resident,attention=vulkan:flash"};
    Mat<float> ref_logits;
    for (const std::string& spec : plans) {
      std::mt19937_64 rng(42);  // the same tokens for every plan
      Mat<float> logits;
      json r = run_plan(cx, m, spec, rng, spec.empty() ? &ref_logits : &logits);
      if (!spec.empty()) {
        r["vs_reference"] = {{"rel_l2", rel_l2(logits, ref_logits)}, {"argmax_agreement", argmax_agreement(logits, ref_logits)}};
        if (spec == "*=vulkan") c["vulkan_vs_reference"] = r["vs_reference"];
      }
      std::fprintf(stderr, "  %-60s prefill %9.1f tok/s   decode %8.1f tok/s%s\n", r["plan"].get<std::string>().c_str(),
                   r["prefill"]["tok_per_s"].get<double>(), r["decode"]["tok_per_s"].get<double>(),
                   r["prefill_per_token_fallback"].get<bool>() ? "   (per-token fallback in prefill)" : "");
      c["results"].push_back(r);
    }
    report["cases"].push_back(c);
  }
}

}  // namespace

Experiment forward_experiment() {
  return {"forward", "whole-model prefill and decode tok/s per plan, per-op time breakdown, dispatches, transfers", {}, run};
}

}  // namespace hl::exp
