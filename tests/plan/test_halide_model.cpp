// The tiny model with Halide variants swapped in ('*=halide': the tuned CPU schedule of every op that has
// one), against transformers' goldens (golden/hf-tiny), in chunked prefill and decode.
#include "plan/executor.h"
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
  for (const char* op : {"moe_block", "matmul_group", "gdn_output", "attention_decode", "matmul_add_rmsnorm", "moe_block_add_rmsnorm", "gdn_decode"})
    CHECK(plan.variant(op).name == "reference");
  check_plan("*=halide", nullptr);
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
// crosses the host. In decode (weights already on the device) the only transfers inside ops are the token id that
// embed checks and uploads and rope's cosine and sine tables, formed on the host.
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
    CHECK((op == "embed" || op == "rope"));
  }
  CHECK(decode_ops == 2);  // embed and rope: the test sees them
  require_no_validation_messages();
}
#endif
