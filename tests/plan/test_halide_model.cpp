// The tiny model with Halide variants swapped in ('*=halide': the tuned CPU schedule of every op that has
// one), against transformers' goldens (golden/hf-tiny), in chunked prefill and decode.
#include <cstring>

#include "plan/executor.h"
#include "ops/halide/halide.h"
#include "plan/argmax.h"
#include "io/safetensors.h"
#include "model/runner.h"
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

namespace {

struct Golden {
  SafetensorsFile file = SafetensorsFile::open(hf_tiny() + "/golden.safetensors");
  ModelWeights w = load_hf(hf_tiny() + "/model");
  std::vector<int32_t> ids;
  Golden() {
    for (int64_t x : file.at("input_ids").read_i64()) ids.push_back(int32_t(x));
  }
};

const Golden& golden() {
  static const Golden g;
  return g;
}

void check_plan(const std::string& spec, gpu::Device* dev) {
  const auto& g = golden();
  const gpu::Plan plan = gpu::Plan::parse(spec, dev);
  RunOptions o;
  o.prefill_chunk = 100;
  o.decode_from = 150;
  gpu::PlanExecutor ex(plan, dev, o.scan);
  const Mat<float> l = run_with(ex, g.w, g.ids, o);
  const double ec = rel_l2(l.topRows(150), g.file.at("chunked.logits").to_mat<double>());
  const double ed = rel_l2(l.bottomRows(12), g.file.at("decode.logits").to_mat<double>());
  WARN("plan " << plan.describe() << ": chunked.logits " << ec << ", decode.logits " << ed);
  CHECK(ec < 1e-4);
  CHECK(ed < 1e-4);
}

}  // namespace

TEST_CASE("halide model: '*=halide' picks the tuned CPU schedules and matches transformers", "[halide][model]") {
  const gpu::Plan plan = gpu::Plan::parse("*=halide", nullptr);  // CPU only: no device needed
  CHECK(!plan.uses_device());
  for (const char* op : {"embed", "add", "add_rmsnorm", "gdn_prep", "slice", "rope", "l2norm", "ssm_gates", "rmsnorm", "gated_rmsnorm", "matmul",
                         "lm_head", "ssm_conv", "ssm_scan", "attention", "moe_router", "moe_experts", "shared_expert"})
    CHECK(plan.variant(op).name == std::string("halide:") + op + ":tuned");
  // Composite ops have no Halide variant of their own: on the reference, the forward pass runs their parts (in Halide).
  for (const char* op : {"moe_block", "matmul_group", "gdn_output", "attention_decode", "add_rmsnorm_matmul_group", "add_rmsnorm_moe_block", "gdn_decode"})
    CHECK(plan.variant(op).name == "reference");
  check_plan("*=halide", nullptr);
  // gdn_prep on the reference: the forward pass then runs ssm_conv (its state updated in place on the CPU), l2norm and
  // ssm_gates in Halide instead of the fused prep.
  check_plan("*=halide,gdn_prep=reference", nullptr);
}

#ifdef HYBRIDLAB_HALIDE_VULKAN
TEST_CASE("halide model: Halide's Vulkan schedules beside hybridlab's Vulkan kernels in one process", "[halide][model][vk]") {
  // Both runtimes in one process on the same device and buffers: Halide-Vulkan for every op Halide has (embed, adds,
  // slices, rope, norms, gates, matmuls, conv, scan, attention, router, experts, shared expert), hybridlab's Vulkan
  // kernels for the composite ops' fused forms.
  check_plan("*=halide,*=vulkan,*=halide-vulkan", &device());
  require_no_validation_messages();
}
#endif

#ifdef HYBRIDLAB_HALIDE_VULKAN
// Every op on Halide's Vulkan runtime (composites as their parts), on hybridlab's buffers: between two ops nothing
// crosses the host. In decode (weights already on the device, rope's tables of positions too) the only transfer inside
// an op is the token id that embed checks and uploads.
TEST_CASE("halide model: '*=halide-vulkan' keeps every tensor on the device between ops", "[halide][model][vk]") {
  const auto& g = golden();
  const gpu::Plan plan = gpu::Plan::parse("*=halide-vulkan", &device());
  RunOptions o;
  o.prefill_chunk = 100;
  o.decode_from = 150;
  gpu::PlanExecutor ex(plan, &device(), o.scan);
  const Mat<float> l = run_with(ex, g.w, g.ids, o);
  const double ec = rel_l2(l.topRows(150), g.file.at("chunked.logits").to_mat<double>());
  const double ed = rel_l2(l.bottomRows(12), g.file.at("decode.logits").to_mat<double>());
  WARN("*=halide-vulkan: chunked.logits " << ec << ", decode.logits " << ed << "\n" << ex.usage_report());
  CHECK(ec < 1e-4);
  CHECK(ed < 1e-4);
  int decode_ops = 0;
  for (const auto& [key, t] : ex.usage().transfers()) {
    const auto& [op, where, phase] = key;
    INFO(op << " " << where << " " << phase << ": " << t.uploads << " up, " << t.downloads << " down");
    if (phase != "decode") continue;
    ++decode_ops;
    CHECK(t.downloads == 0);
    CHECK(op == "embed");
  }
  CHECK(decode_ops == 1);  // embed: the test sees it
  require_no_validation_messages();
}
#endif

#ifdef HYBRIDLAB_HALIDE_VULKAN
// Halide's kernels on hybridlab's stream (issue 24, route (a)): a '*=halide-vulkan' forward pass (chunked prefill and
// decode) issues every Halide kernel as a hybridlab dispatch (the device's dispatch count rises by the number of Halide
// kernels; Halide's runtime submits no kernel and no copy of its own) and matches transformers as before. With
// halide.vulkan.own_dispatch = 0 (Halide's runtime submitting each kernel and waiting for it) the same kernels run
// there instead, to the same logits.
TEST_CASE("halide model: '*=halide-vulkan' issues Halide's kernels as hybridlab dispatches, own_dispatch=0 as before",
          "[halide][model][vk]") {
  const auto& g = golden();
  gpu::Device& d = device();
  const gpu::Plan plan = gpu::Plan::parse("*=halide-vulkan", &d);
  RunOptions o;
  o.prefill_chunk = 100;
  o.decode_from = 150;
  struct Run {
    Mat<float> logits;
    gpu::halide::VulkanCounts halide;
    uint64_t dispatches = 0, submits = 0;
  };
  const auto forward = [&](uint32_t own) {
    vk::ScopedTuning t(d.ctx().profile(), {{"halide.vulkan.own_dispatch", own}});
    gpu::PlanExecutor ex(plan, &d, o.scan);
    d.sync();
    d.reset_stats();
    const gpu::halide::VulkanCounts c0 = gpu::halide::vulkan_counts();
    Run r;
    r.logits = run_with(ex, g.w, g.ids, o);
    d.sync();
    const gpu::halide::VulkanCounts c1 = gpu::halide::vulkan_counts();
    r.halide = {c1.dispatched - c0.dispatched, c1.runtime_kernels - c0.runtime_kernels,
                c1.runtime_transfers - c0.runtime_transfers};
    r.dispatches = d.stats().dispatches;
    r.submits = d.stats().submits;
    const double ec = rel_l2(r.logits.topRows(150), g.file.at("chunked.logits").to_mat<double>());
    const double ed = rel_l2(r.logits.bottomRows(12), g.file.at("decode.logits").to_mat<double>());
    WARN("own_dispatch=" << own << ": chunked.logits " << ec << ", decode.logits " << ed << "; Halide kernels on hybridlab's "
         "stream " << r.halide.dispatched << ", through Halide's runtime " << r.halide.runtime_kernels << "; device dispatches "
         << r.dispatches << ", submissions " << r.submits);
    CHECK(ec < 1e-4);
    CHECK(ed < 1e-4);
    return r;
  };
  const Run own = forward(1), old = forward(0);
  CHECK(own.halide.dispatched > 0);
  CHECK(own.halide.runtime_kernels == 0);
  CHECK(own.halide.runtime_transfers == 0);
  CHECK(old.halide.dispatched == 0);
  CHECK(old.halide.runtime_kernels == own.halide.dispatched);  // the same kernels, submitted by Halide's runtime
  CHECK(own.dispatches == old.dispatches + own.halide.dispatched);
  CHECK(own.submits < old.submits);  // Halide's path submits hybridlab's work before each pipeline call
  CHECK(rel_l2(own.logits, old.logits) < 1e-5);
  require_no_validation_messages();
}
#endif

#ifdef HYBRIDLAB_HALIDE_VULKAN
// Decode replay with '*=halide-vulkan': Halide's kernels on hybridlab's stream are captured like any, and a replayed
// step gives the logits of a stepped one, bit for bit (as test_vk_model's replay test, 50 greedy steps after a 20-token
// prompt, across the KV cache's growth); the replayed segments hold Halide's dispatches. With own_dispatch=0 (Halide's
// runtime submitting its kernels) the plan cannot be captured.
TEST_CASE("halide model: '*=halide-vulkan' decode replay equals stepping, bit for bit", "[halide][model][vk]") {
  const auto& g = golden();
  gpu::Device& d = device();
  const gpu::Plan plan = gpu::Plan::parse("*=halide-vulkan", &d);
  {
    vk::ScopedTuning old(d.ctx().profile(), {{"halide.vulkan.own_dispatch", 0}});
    CHECK(!gpu::PlanExecutor(plan, &d).can_capture());
  }
  const std::vector<int32_t> prompt(g.ids.begin(), g.ids.begin() + 20);
  auto run = [&](bool replay) {
    gpu::PlanExecutor ex(plan, &d);
    CHECK(ex.can_capture());
    Forward<gpu::PlanExecutor> fwd(ex, g.w);
    fwd.step(prompt, Phase::Prefill);
    std::vector<Mat<float>> out;
    int32_t tok = g.ids[20];
    d.reset_stats();
    for (int i = 0; i < 50; ++i) {
      const Tensor l = !replay || i == 0 ? fwd.step({tok}, Phase::Decode) : i == 1 ? fwd.capture_decode(tok) : fwd.replay_decode(tok);
      out.push_back(l.f32());
      tok = gpu::argmax_host(out.back()).front();
    }
    return std::pair{out, d.stats().replayed_dispatches};
  };
  const auto [want, stepped_replays] = run(false);
  const auto [got, replayed] = run(true);
  CHECK(stepped_replays == 0);
  CHECK(replayed > 0);
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("decode step " << i << ", rel L2 " << rel_l2(got[i], want[i]));
    REQUIRE(want[i].rows() == 1);
    CHECK(std::memcmp(want[i].data(), got[i].data(), size_t(want[i].size()) * 4) == 0);
  }
  require_no_validation_messages();
}
#endif
