// The whole tiny model through Vulkan plans: against transformers' goldens, validate mode, plan errors.
#include "plan/argmax.h"
#include "ops/matmul/quant_rows.h"
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

Mat<float> run_plan(const gpu::Plan& plan, const std::vector<int32_t>& ids, const RunOptions& o, bool validate = false,
                    std::string* report = nullptr) {
  gpu::PlanExecutor ex(plan, &device(), o.scan, validate);
  Mat<float> l = run_with(ex, golden().w, ids, o);
  if (report) *report = ex.usage_report() + ex.validation_report();
  return l;
}

}  // namespace

TEST_CASE("vk model: '*=vulkan' matches transformers in chunked prefill and decode", "[vk][model]") {
  const auto& g = golden();
  // '*=vulkan' runs the GDN preparation fused (gdn_prep=vulkan:fused); 'gdn_prep=reference' keeps the separate
  // ops (ssm_conv, slice, l2norm, ssm_gates), each on its Vulkan variant. Likewise the residual adds with the
  // norms after them (add_rmsnorm=vulkan:fused; 'add_rmsnorm=reference': add, then rmsnorm; in decode the ops that
  // read the norm fold the add and norm in front of them where they take the weights: add_rmsnorm_matmul_group,
  // add_rmsnorm_moe_block). attention_prep=vulkan:fused (experimental, not in '*=vulkan') runs a prompt chunk's q | gate
  // split, q/k norms and ropes as one op instead of the slices, norms and ropes.
  // Whether the usage report has a row for an op (rows start with the op's name and a space).
  const auto ran_op = [](const std::string& report, const std::string& op) { return report.find("\n" + op + " ") != std::string::npos; };
  for (auto [spec, ran, skipped] : {std::tuple{"*=vulkan", "gdn_prep", "ssm_conv"},
                                    {"*=vulkan,gdn_prep=reference", "ssm_conv", "gdn_prep"},
                                    {"*=vulkan,add_rmsnorm=reference,add_rmsnorm_matmul_group=reference", "add", "add_rmsnorm"},
                                    {"*=vulkan,attention_prep=vulkan:fused", "attention_prep", "slice"}}) {
    const gpu::Plan plan = gpu::Plan::parse(spec, &device());
    RunOptions o;
    o.prefill_chunk = 100;
    o.decode_from = 150;
    std::string report;
    const Mat<float> l = run_plan(plan, g.ids, o, false, &report);
    const double ec = rel_l2(l.topRows(150), g.file.at("chunked.logits").to_mat<double>());
    const double ed = rel_l2(l.bottomRows(12), g.file.at("decode.logits").to_mat<double>());
    WARN("plan " << plan.describe() << ": chunked.logits " << ec << ", decode.logits " << ed);
    CHECK(ec < 1e-4);
    CHECK(ed < 1e-4);
    INFO(report);
    CHECK(ran_op(report, ran));  // the path the plan picked ran
    CHECK(!ran_op(report, skipped));
    const bool unfused_norms = std::string(spec).find("add_rmsnorm=reference") != std::string::npos;
    CHECK(ran_op(report, "add_rmsnorm") == !unfused_norms);
    // Fused, the MoE block's routed and shared outputs are added inside add_rmsnorm: no add op runs at all.
    CHECK(ran_op(report, "add") == unfused_norms);
    require_no_validation_messages();
  }
}

// A device whose profile pins every pipeline to one subgroup size (amd-rdna4 asks for 32 where RADV may pick 64): the
// kernels size their workgroups by that size and run at it, here at the smallest and the largest the device allows.
TEST_CASE("vk model: '*=vulkan' with every pipeline at one subgroup size matches transformers", "[vk][model]") {
  const auto& g = golden();
  const vk::DeviceInfo& plain = device().info();
  if (!plain.subgroup_size_control || !plain.compute_required_subgroup_size) {
    WARN("SKIPPED: " << plain.name << " cannot require a compute subgroup size");
    return;
  }
  for (uint32_t size : {plain.min_subgroup_size, plain.max_subgroup_size}) {
    gpu::Device d(vk::ContextOptions{.tune = "subgroup_size_preferred=" + std::to_string(size)});
    REQUIRE(d.info().pipeline_subgroup_size == size);
    const gpu::Plan plan = gpu::Plan::parse("*=vulkan", &d);
    RunOptions o;
    o.prefill_chunk = 100;
    o.decode_from = 150;
    gpu::PlanExecutor ex(plan, &d, o.scan);
    const Mat<float> l = run_with(ex, g.w, g.ids, o);
    const double ec = rel_l2(l.topRows(150), g.file.at("chunked.logits").to_mat<double>());
    const double ed = rel_l2(l.bottomRows(12), g.file.at("decode.logits").to_mat<double>());
    WARN("subgroup size " << size << ": chunked.logits " << ec << ", decode.logits " << ed);
    CHECK(ec < 1e-4);
    CHECK(ed < 1e-4);
    const auto msgs = d.ctx().validation_messages();
    INFO((msgs.empty() ? std::string() : msgs.front()));
    CHECK(msgs.empty());
    if (plain.min_subgroup_size == plain.max_subgroup_size) break;
  }
}

TEST_CASE("vk model: the cooperative-matrix prefill variants against transformers", "[vk][model][coopmat]") {
  const auto& g = golden();
  gpu::Device* d = coopmat_device();
  const bool emulate = d == nullptr;
  if (emulate) d = &device();
  const std::map<std::string, std::string> f16_ops{{"attention", "vulkan:flash_rows"},
                                                   {"moe_experts", "vulkan:route_pack_coopmat"},
                                                   {"shared_expert", "vulkan:fused_coopmat"},
                                                   {"ssm_scan", "vulkan:chunked_coopmat"}};
  std::map<std::string, uint32_t> emul;
  if (emulate)
    for (const char* k : {"attention.flash_rows", "moe_experts.route_pack_coopmat", "ssm_scan.chunked_coopmat"})
      emul[std::string(k) + ".cm_emulate"] = 1;
  vk::ScopedTuning s(d->ctx().profile(), emul);
  std::string spec = "*=vulkan";
  for (auto& [op, v] : f16_ops) spec += "," + op + "=" + v;
  const gpu::Plan plan = gpu::Plan::parse(spec, d);
  RunOptions o;
  o.prefill_chunk = 100;
  o.decode_from = 150;
  gpu::PlanExecutor ex(plan, d, o.scan, true);
  const Mat<float> l = run_with(ex, g.w, g.ids, o);
  for (auto& [op, st] : ex.validation()) {
    const double tol = f16_ops.count(op) ? gpu::Registry::get().variant(op, f16_ops.at(op)).precision_tolerance : 1e-5;
    INFO(op << ": worst rel L2 " << st.max_rel_l2 << " over " << st.calls << " calls");
    CHECK(st.max_rel_l2 <= tol);
    CHECK(st.nonfinite == 0);
  }
  for (auto& [op, v] : f16_ops) CHECK(ex.validation().count(op));  // each f16 op ran and was checked
  // The kernels that ran: route_pack_coopmat's GEMM reads whole steps of 64 values, which the tiny model's experts (width
  // 48) are not: it hands them to route_pack's scalar GEMM, and the report names that kernel.
  CHECK(ex.validation().at("moe_experts").variants.count("vulkan:route_pack"));
  CHECK(ex.validation().at("ssm_scan").max_rel_l2 > 1e-5);         // with its f16 roundings: not the f32 kernel
  CHECK(ex.validation().at("shared_expert").variants.count("vulkan:fused_coopmat"));  // prompt chunks on the GEMM
  const Mat<double> want = g.file.at("chunked.logits").to_mat<double>();
  const Mat<double> got = l.topRows(150).cast<double>();
  int agree = 0;
  for (Eigen::Index r = 0; r < want.rows(); ++r) {
    Eigen::Index a = 0, b = 0;
    want.row(r).maxCoeff(&a);
    got.row(r).maxCoeff(&b);
    agree += a == b;
  }
  const double ec = rel_l2(l.topRows(150), want), ag = double(agree) / double(want.rows());
  WARN((emulate ? "emulated" : "real") << " cooperative matrices: chunked.logits rel L2 " << ec << ", argmax agreement " << ag);
  CHECK(ec < 0.5);
  CHECK(ag >= 0.85);
}

TEST_CASE("vk model: validate mode reports every shadowed op and catches a wrong variant", "[vk][model]") {
  const auto& g = golden();
  gpu::Plan plan = gpu::Plan::parse("*=vulkan", &device());
  std::string report;
  run_plan(plan, {g.ids.begin(), g.ids.begin() + 20}, {}, true, &report);
  CHECK_THAT(report, Catch::Contains("rmsnorm") && Catch::Contains("vulkan:rowgroup") && Catch::Contains("rel L2") &&
                         Catch::Contains("gdn_prep"));

  // A deliberately wrong rmsnorm (1% too large) is caught at its first layer.
  gpu::Variant wrong = gpu::Registry::get().variant("rmsnorm", "vulkan:rowgroup");
  wrong.name = "vulkan:wrong";
  const auto right = wrong.run;
  wrong.run = [right](gpu::VariantCtx& c, gpu::OpArgs& a) {
    right(c, a);
    Tensor y = a.t.at("y").clone();
    y.f32_mut() *= 1.01f;
    a.set("y", y);
  };
  plan.set("rmsnorm", &wrong);
  gpu::PlanExecutor ex(plan, &device(), {}, true);
  run_with(ex, g.w, {g.ids.begin(), g.ids.begin() + 20}, {});
  const auto& st = ex.validation().at("rmsnorm");
  CHECK(st.max_rel_l2 > 5e-3);
  CHECK(st.worst_layer >= -1);
  CHECK_THAT(ex.validation_report(), Catch::Contains("vulkan:wrong"));
  CHECK(ex.validation().at("matmul").max_rel_l2 < 1e-5);  // each op is measured on its own inputs
  require_no_validation_messages();
}

TEST_CASE("vk model: a per-token variant in prefill is reported as a fallback", "[vk][model]") {
  gpu::Plan plan = gpu::Plan::parse("*=vulkan", &device());
  gpu::Variant slow = gpu::Registry::get().variant("ssm_scan", "reference");
  slow.name = "reference:per_token_test";
  slow.per_token = true;
  plan.set("ssm_scan", &slow);
  gpu::PlanExecutor ex(plan, &device());
  RunOptions o;
  o.decode_from = 6;
  run_with(ex, golden().w, {golden().ids.begin(), golden().ids.begin() + 8}, o);
  CHECK(ex.prefill_fallback());
  CHECK_THAT(ex.usage_report(), Catch::Contains("PER-TOKEN FALLBACK in prefill") && Catch::Contains("ssm_scan"));
}

TEST_CASE("vk model: plan errors are one-line and name the valid choices", "[vk][plan]") {
  CHECK_THROWS_WITH(gpu::Plan::parse("nope=vulkan", &device()), Catch::Contains("unknown op 'nope'") && Catch::Contains("matmul"));
  CHECK_THROWS_WITH(gpu::Plan::parse("matmul=vulkan:nope", &device()),
                    Catch::Contains("unknown variant 'vulkan:nope'") && Catch::Contains("vulkan:tiled"));
  CHECK_THROWS_WITH(gpu::Plan::parse("matmul", &device()), Catch::Contains("not op=variant"));
  CHECK_THROWS_WITH(gpu::Plan::parse("*=cuda", &device()), Catch::Contains("no op has"));
  CHECK_THROWS_WITH(gpu::Plan::parse("matmul=vulkan:tiled", nullptr), Catch::Contains("no Vulkan device"));
  const gpu::Plan p = gpu::Plan::parse("*=vulkan, matmul=vulkan:tiled,lm_head=reference", &device());
  CHECK(p.variant("matmul").name == "vulkan:tiled");
  CHECK(p.variant("lm_head").name == "reference");
  CHECK(p.variant("rmsnorm").family == "vulkan");
  CHECK(gpu::Plan::needs_device("*=vulkan"));
  CHECK(!gpu::Plan::needs_device("matmul=reference"));
}

// Decode replay: a decode step captured once, then replayed at later positions with new tokens, gives the same
// logits, bit for bit, as running every step (the same kernels on the same buffers). Greedy tokens, so each step's
// input depends on the last; 50 steps after a 20-token prompt cross the KV cache's growth past 64 rows in the
// attention layer (a live step of the replay); with a planned context (72 rows) the cache never grows.
TEST_CASE("vk model: decode replay equals stepping, bit for bit", "[vk][model]") {
  const auto& g = golden();
  for (const char* spec : {"*=vulkan", "*=vulkan,add_rmsnorm=reference,gdn_prep=reference",
                           "*=vulkan,add_rmsnorm_matmul_group=vulkan:fused_decode,add_rmsnorm_moe_block=vulkan:fused_decode"}) {
    INFO("plan " << spec);
    const gpu::Plan plan = gpu::Plan::parse(spec, &device());
    const std::vector<int32_t> prompt(g.ids.begin(), g.ids.begin() + 20);
    uint64_t replay_copies = 0;  // buffer copies recorded by the replayed steps of the last run
    auto run = [&](bool replay, int64_t capacity = 0) {
      gpu::PlanExecutor ex(plan, &device());
      ex.set_context_capacity(capacity);  // > 0: KV caches of that many rows and the states on the device up front
      Forward<gpu::PlanExecutor> fwd(ex, g.w);
      fwd.step(prompt, Phase::Prefill);
      std::vector<Mat<float>> out;
      int32_t tok = g.ids[20];
      replay_copies = 0;
      for (int i = 0; i < 50; ++i) {
        const uint64_t c0 = device().stats().copies;
        const Tensor l = !replay || i == 0 ? fwd.step({tok}, Phase::Decode) : i == 1 ? fwd.capture_decode(tok) : fwd.replay_decode(tok);
        if (replay && i > 1) replay_copies += device().stats().copies - c0;
        out.push_back(l.f32());
        tok = gpu::argmax_host(out.back()).front();
      }
      return out;
    };
    const auto want = run(false), got = run(true), planned = run(true, 72);
    {  // The token fed on the device: each replayed step embeds the step before's argmax (no download between steps, so
       // the captured segments are pending more than once): the same greedy tokens as stepping.
      gpu::PlanExecutor ex(plan, &device());
      Forward<gpu::PlanExecutor> fwd(ex, g.w);
      fwd.step(prompt, Phase::Prefill);
      std::vector<Tensor> ids;
      int32_t tok = g.ids[20];
      for (int i = 0; i < 50; ++i) {
        const Tensor l = i == 0 ? fwd.step({tok}, Phase::Decode) : i == 1 ? fwd.capture_decode(tok) : fwd.replay_decode(ids.back());
        if (i == 0) tok = gpu::argmax_rows(&device(), l).front();
        else ids.push_back(gpu::argmax_device(device(), l));
      }
      CHECK(tok == gpu::argmax_host(want[0]).front());
      for (size_t k = 0; k < ids.size(); ++k) {
        INFO("decode step " << k + 1);
        CHECK(ids[k].i32()(0, 0) == gpu::argmax_host(want[k + 1]).front());
      }
      CHECK_THROWS_WITH(fwd.replay_decode(Tensor::from_i32(IMat::Zero(1, 1))), Catch::Contains("one i32 on the device"));
    }
    // With the caches planned, the live ops (embed, attention_decode) write straight into the tensors the replayed
    // segments read: no copy in any replayed step; with decode.replay.in_place 0, a copy after each, the same logits.
    CHECK(replay_copies == 0);
    {
      const vk::ScopedTuning copy(device().ctx().profile(), {{"decode.replay.in_place", 0}});
      const auto copied = run(true, 72);
      CHECK(replay_copies > 0);
      for (size_t i = 0; i < want.size(); ++i)
        CHECK(std::memcmp(want[i].data(), copied[i].data(), size_t(want[i].size()) * 4) == 0);
    }
    // The captured step's segments run as they are cut (decode.capture.submit_early 1): a submission per segment during
    // the capture; or after the whole capture (0). The same logits bit for bit, planned caches or not (the cache's growth
    // is a live step).
    uint64_t capture_submits[2] = {0, 0};
    for (uint32_t early : {0u, 1u}) {
      const vk::ScopedTuning scope(device().ctx().profile(), {{"decode.capture.submit_early", early}});
      for (int64_t capacity : {int64_t(0), int64_t(72)}) {
        INFO("submit_early " << early << ", context capacity " << capacity);
        const auto early_run = run(true, capacity);
        for (size_t i = 0; i < want.size(); ++i)
          CHECK(std::memcmp(want[i].data(), early_run[i].data(), size_t(want[i].size()) * 4) == 0);
      }
      gpu::PlanExecutor ex(plan, &device());
      Forward<gpu::PlanExecutor> fwd(ex, g.w);
      fwd.step({g.ids[0]}, Phase::Decode).f32();
      const uint64_t s0 = device().stats().submits;
      fwd.capture_decode(g.ids[1]).f32();
      capture_submits[early] = device().stats().submits - s0;
    }
    CHECK(capture_submits[1] >= 3);  // the segments before and after each live op, then the fence
    CHECK(capture_submits[1] > capture_submits[0]);  // 0: the whole step at the capture's end
    {  // a replay for another forward pass than the captured one is refused
      gpu::PlanExecutor ex(plan, &device());
      Forward<gpu::PlanExecutor> a(ex, g.w), b(ex, g.w);
      a.step({g.ids[0]}, Phase::Decode);
      a.capture_decode(g.ids[1]);
      CHECK_THROWS_WITH(b.replay_decode(g.ids[2]), Catch::Contains("another forward pass"));
    }
    for (size_t i = 0; i < want.size(); ++i) {
      INFO("decode step " << i << ", rel L2 " << rel_l2(got[i], want[i]));
      REQUIRE(want[i].rows() == 1);
      CHECK(std::memcmp(want[i].data(), got[i].data(), size_t(want[i].size()) * 4) == 0);
      CHECK(std::memcmp(want[i].data(), planned[i].data(), size_t(want[i].size()) * 4) == 0);
    }
    require_no_validation_messages();
  }
}

// The tiny model's experts (width 48) are no whole 32-value units, so its plans never fuse the MoE block: this one's
// are. Decode through '*=vulkan' runs moe_block=vulkan:fused_decode (stepped and replayed), prefill the parts; both
// against the oracle on the same synthetic weights, and against the unfused plan.
TEST_CASE("vk model: the fused MoE block in decode against the oracle", "[vk][model]") {
  ModelConfig c = ModelConfig::preset("tiny");
  c.expert_ffn = 64, c.shared_ffn = 96;
  const ModelWeights w = synthetic_weights(c, 7);
  std::vector<int32_t> ids;
  for (int i = 0; i < 24; ++i) ids.push_back((i * 97 + 5) % int32_t(c.vocab));
  RunOptions o;
  o.prefill_chunk = 8;
  o.decode_from = 16;
  const Mat<float> want = run_reference(w, ids, o);
  // '*=vulkan' folds every add and norm of a decode step but the final one into the op that reads the norm; the third
  // plan runs them as add_rmsnorm dispatches.
  const std::string folds_in = "*=vulkan";
  const std::string folds_off = "*=vulkan,add_rmsnorm_matmul_group=reference,add_rmsnorm_moe_block=reference";
  // '*=vulkan' also leaves the Gated DeltaNet's output norm's 1 / rms to its projection (rms_scaled_matmul); this one keeps
  // the norm in gdn_decode's step.
  const std::string norm_in_step = "*=vulkan,rms_scaled_matmul=reference";
  for (auto [spec, fused] :
       {std::pair{folds_in, true}, {"*=vulkan,moe_block=reference", false}, {folds_off, true}, {norm_in_step, true}}) {
    INFO("plan " << spec);
    const gpu::Plan plan = gpu::Plan::parse(spec, &device());
    gpu::PlanExecutor ex(plan, &device());
    CHECK(ex.can_capture());  // a composite on its reference runs its parts: still replayed
    const Mat<float> got = run_with(ex, w, ids, o);
    CHECK(rel_l2(got, want) < 1e-4);
    CHECK((ex.usage_report().find("moe_block") != std::string::npos) == fused);
    if (spec == folds_in || spec == norm_in_step) {
      CHECK_THAT(ex.usage_report(), Catch::Contains("add_rmsnorm_matmul_group") && Catch::Contains("add_rmsnorm_moe_block"));
    }
    CHECK((ex.usage_report().find("rms_scaled_matmul") != std::string::npos) == (spec != norm_in_step));
    CHECK_THAT(ex.usage_report(), Catch::Contains("moe_experts"));  // prefill always runs the parts
    // Replayed decode steps give the stepped ones' logits bit for bit.
    gpu::PlanExecutor rx(plan, &device());
    Forward<gpu::PlanExecutor> fwd(rx, w);
    for (int t0 : {0, 8}) fwd.step({ids.begin() + t0, ids.begin() + t0 + 8}, Phase::Prefill);  // the same chunks
    for (int i = 16; i < 24; ++i) {
      const Tensor l = i == 16 ? fwd.step({ids[size_t(i)]}, Phase::Decode)
                               : i == 17 ? fwd.capture_decode(ids[size_t(i)]) : fwd.replay_decode(ids[size_t(i)]);
      const Mat<float> lf = l.f32();
      INFO("decode position " << i);
      CHECK(std::memcmp(lf.data(), got.row(i).eval().data(), size_t(lf.size()) * 4) == 0);
    }
  }
  // Validate mode shadows the fused block with its reference (the parts composed) and holds it to its tolerance.
  for (const std::string& spec : {folds_off, folds_in, norm_in_step}) {
    const gpu::Plan all = gpu::Plan::parse(spec, &device());
    gpu::PlanExecutor vx(all, &device(), {}, true);
    run_with(vx, w, ids, o);
    CHECK_THAT(vx.validation_report(), Catch::Contains("moe_block"));
    if (spec != folds_off) {
      std::vector<std::string> ops{"add_rmsnorm_matmul_group", "add_rmsnorm_moe_block"};
      if (spec == folds_in) ops.push_back("rms_scaled_matmul");
      for (const std::string& op : ops) {
        INFO(op << ": worst rel L2 " << vx.validation().at(op).max_rel_l2);
        CHECK(vx.validation().at(op).max_rel_l2 <= gpu::kX16Tolerance);
      }
    }
  }
  require_no_validation_messages();
}

// decode.gdn_norm_parts 0 keeps the Gated DeltaNet's output norm in gdn_decode's step under '*=vulkan' (no rms_scaled_matmul),
// still replayed; 3, which does not divide the tiny model's heads of 32, runs as 1; all against the oracle.
TEST_CASE("vk model: decode.gdn_norm_parts picks where the Gated DeltaNet's output norm runs", "[vk][model]") {
  ModelConfig c = ModelConfig::preset("tiny");
  c.expert_ffn = 64, c.shared_ffn = 96;
  const ModelWeights w = synthetic_weights(c, 7);
  std::vector<int32_t> ids;
  for (int i = 0; i < 20; ++i) ids.push_back((i * 89 + 3) % int32_t(c.vocab));
  RunOptions o;
  o.prefill_chunk = 8;
  o.decode_from = 12;
  const Mat<float> want = run_reference(w, ids, o);
  const gpu::Plan plan = gpu::Plan::parse("*=vulkan", &device());
  for (uint32_t parts : {0u, 1u, 2u, 3u, 4u}) {
    INFO("decode.gdn_norm_parts " << parts);
    const vk::ScopedTuning tune(device().ctx().profile(), {{"decode.gdn_norm_parts", parts}});
    gpu::PlanExecutor ex(plan, &device());
    CHECK(ex.can_capture());
    CHECK(rel_l2(run_with(ex, w, ids, o), want) < 1e-4);
    CHECK((ex.usage_report().find("rms_scaled_matmul") != std::string::npos) == (parts != 0));
  }
}

TEST_CASE("vk model: a decode token's dispatches with the decode fusions and without", "[vk][model]") {
  ModelConfig c = ModelConfig::preset("tiny");  // 3 Gated DeltaNet layers, 1 attention layer
  c.expert_ffn = 64, c.shared_ffn = 96;         // whole 32-value units: the MoE block fuses
  const ModelWeights w = synthetic_weights(c, 7);
  const std::vector<int32_t> prompt{5, 17, 29, 41, 53, 65, 77, 89};
  // '*=vulkan': every layer is 6 dispatches: the add and norm with its projections (add_rmsnorm_matmul_group; the first
  // layer: matmul_group after the input norm), gdn_decode or attention_decode, the output projection (a Gated DeltaNet
  // layer's with its norm's 1 / rms in front: rms_scaled_matmul), the add and norm
  // with the MoE block's three (add_rmsnorm_moe_block); the token adds embed, the first layer's input norm, the last
  // layer's add and norm (the final norm, read by the lm_head) and lm_head. With the add and norm as dispatches of their
  // own (folds_off) 8 per layer, and the token embed, the input norm and lm_head. Unfused (the four decode composites
  // on their parts): a Gated DeltaNet layer 9 (matmul_group, gdn_prep, gdn_output, matmul, add_rmsnorm, moe_block's 3,
  // add_rmsnorm), the attention layer 15 (matmul_group, 2 slices, 2 norms, 2 ropes, the cache append and the attention
  // (one key split at this context), matmul, add_rmsnorm, 3, add_rmsnorm).
  // The decode prefetch (plan/prefetch.h) adds two dispatches per layer but the last (its tail weights beside its
  // mixer, the next layer's projections beside the MoE block) and no barrier: they run beside others.
  const std::string folds_off = "add_rmsnorm_matmul_group=reference,add_rmsnorm_moe_block=reference";
  const std::string off = "attention_decode=reference,gdn_decode=reference," + folds_off;
  for (auto [spec, want] : {std::pair{std::string("*=vulkan"), 6 * 4 + 4}, {"*=vulkan," + folds_off, 8 * 4 + 3},
                            {"*=vulkan," + off, 3 * 9 + 15 + 3}}) {
    INFO("plan " << spec);
    const gpu::Plan plan = gpu::Plan::parse(spec, &device());  // the executor keeps a reference
    std::array<uint64_t, 3> barriers{};
    std::array<Mat<float>, 3> logits;
    for (int mode : {0, 1, 2}) {  // off; volatile loads; plain loads into sinks
      const int prefetch = mode > 0 ? 1 : 0;
      INFO("decode.prefetch " << prefetch << ", mode " << mode);
      const vk::ScopedTuning tune(device().ctx().profile(), {{"decode.prefetch", uint32_t(prefetch)},
                                                             {"decode.prefetch.volatile", mode == 2 ? 0u : 1u}});
      gpu::PlanExecutor ex(plan, &device());
      Forward<gpu::PlanExecutor> fwd(ex, w);
      fwd.step(prompt, Phase::Prefill);
      fwd.step({3}, Phase::Decode).f32();  // the first decode step (caches grown), waited for
      const gpu::DeviceStats s0 = device().stats();
      logits[size_t(mode)] = fwd.step({9}, Phase::Decode).f32();
      CHECK(int(device().stats().dispatches - s0.dispatches) == want + prefetch * (2 * 4 - 1));
      barriers[size_t(mode)] = device().stats().barriers - s0.barriers;
    }
    for (size_t m : {1u, 2u}) {
      CHECK(barriers[m] == barriers[0]);
      CHECK(std::memcmp(logits[0].data(), logits[m].data(), size_t(logits[0].size()) * 4) == 0);
    }
  }
}

// Where data crossed: the usage report counts the host <-> device transfers made while each op's variant ran. With
// every op on Vulkan but rmsnorm on the reference, rmsnorm reads its input back and the op after it uploads its
// output, in prefill and in decode; with every op on Vulkan, a decode step moves nothing inside its ops.
TEST_CASE("vk model: the usage report says where data crossed between the host and the device", "[vk][model]") {
  const auto run = [](const std::string& spec) {
    const gpu::Plan plan = gpu::Plan::parse(spec, &device());
    RunOptions o;
    o.prefill_chunk = 100;
    o.decode_from = 150;
    gpu::PlanExecutor ex(plan, &device(), o.scan);
    run_with(ex, golden().w, golden().ids, o);
    std::map<std::string, gpu::Usage::Transfers> decode;
    for (const auto& [key, t] : ex.usage().transfers())
      if (std::get<2>(key) == "decode") decode[std::get<0>(key)] = t;
    return std::pair{decode, ex.usage_report()};
  };
  const auto [mixed, mixed_report] = run("*=vulkan,rmsnorm=reference");
  INFO(mixed_report);
  REQUIRE(mixed.count("rmsnorm"));
  CHECK(mixed.at("rmsnorm").downloads > 0);
  CHECK(mixed.at("rmsnorm").uploads == 0);
  CHECK_THAT(mixed_report, Catch::Contains("host <-> device transfers inside ops (where data crossed"));
  const auto [vk, vk_report] = run("*=vulkan");
  INFO(vk_report);
  for (const auto& [op, t] : vk) {
    INFO(op);
    CHECK(t.downloads == 0);
  }
}
