#include "plan/executor.h"

#include <algorithm>

#include "ops/matmul/quant_rows.h"
#include "ops/matmul_group/group.h"
#include "ops/moe_block/fused.h"
#include "ops/rms_scaled_matmul/fused.h"
#include "plan/prefetch.h"

namespace hl::gpu {

PlanExecutor::PlanExecutor(const Plan& plan, Device* dev, ScanOptions scan, bool validate)
    : plan_(plan), dev_(dev), scan_(scan), validate_(validate), weights_(dev) {
  ctx_.dev = dev;
  ctx_.weights = &weights_;
  if (plan.uses_device() && !dev) fail("the plan '{}' needs a Vulkan device", plan.describe());
}

PlanExecutor::LayerState PlanExecutor::init_state(const ModelConfig& c, LayerKind kind) const {
  LayerState s;
  const int64_t kv = int64_t(c.n_kv_heads) * c.head_dim;
  if (kind == LayerKind::FullAttention) {
    const bool planned = dev_ && context_ > 0;  // rows [0, kv_len) hold data: the rest needs no clearing
    s.k_cache = planned ? Tensor::device(*dev_, context_, kv) : Tensor::host(0, kv);
    s.v_cache = planned ? Tensor::device(*dev_, context_, kv) : Tensor::host(0, kv);
  } else {
    const int64_t conv_rows = c.conv_kernel - 1, ssm_cols = int64_t(c.lin_k_dim) * c.lin_v_dim;
    // Planned: zeroed on the device (a fill), not uploaded (the states of 30 layers are tens of MB over the bus).
    const bool planned = dev_ && context_ > 0;
    s.conv = planned ? Tensor::device_zeros(*dev_, conv_rows, c.conv_dim()) : Tensor::host(conv_rows, c.conv_dim());
    s.ssm = planned ? Tensor::device_zeros(*dev_, c.lin_v_heads, ssm_cols) : Tensor::host(c.lin_v_heads, ssm_cols);
  }
  return s;
}

void PlanExecutor::begin_step(Phase phase) {
  phase_ = phase;
  layer_ = -1;
  // Level scheduling (runtime/device.h) in decode, and in prefill where device.stream.reorder_prefill says; a
  // prefill step's stream goes out early while the GPU idles (decode's first segment is submitted at once anyway).
  if (dev_) {
    dev_->set_reorder(dev_->tune("device.stream.reorder") != 0 &&
                      (phase == Phase::Decode || dev_->tune("device.stream.reorder_prefill") != 0));
    dev_->set_idle_submit(phase != Phase::Decode);
  }
}

void PlanExecutor::begin_layer(int layer, LayerKind kind) {
  layer_ = layer;
  kind_ = kind;
}

void PlanExecutor::run(const std::string& op, OpArgs& a, const DecodeGraph::Rerun& rerun) {
  const Variant& chosen = plan_.variant(op);
  const Variant& v = Registry::get().resolve(chosen, ctx_, a);
  const std::string where =
      layer_ < 0 ? "model" : (kind_ == LayerKind::FullAttention ? "full-attention" : "gated-deltanet");
  const OpDef& def = Registry::get().op(op);
  // A per-token kernel on a one-token chunk walks nothing token by token: a fallback only where the plan picked
  // it or it got several tokens.
  const bool per_token = v.per_token && (chosen.per_token || a.in(def.inputs.at(0)).rows() > 1);
  usage_.record(op, where, phase_ == Phase::Prefill, chosen.name, v.name, per_token);
  if (capturing() && def.live) {
    if (!rerun) fail("decode replay: op {} depends on the token or position, and its executor method gives no rerun", op);
    graph_->begin_live();
    v.run(ctx_, a);
    graph_->live(a.t.at(def.outputs.at(0)), rerun);
    return;
  }
  // A live op rerun by a replayed step: its output preset to the tensor the step's later segments read
  // (decode.replay.in_place; 0: a copy after it, as before).
  if (def.live && graph_ && graph_->rerun_into() && dev_->tune("decode.replay.in_place"))
    a.t.emplace(def.outputs.at(0), *graph_->rerun_into());
  if (profiling_) return profiler_.time(dev_, op, v.needs_device, [&] { v.run(ctx_, a); });
  const auto run_variant = [&] {
    if (!dev_) return v.run(ctx_, a);
    const DeviceStats s0 = dev_->stats();
    v.run(ctx_, a);
    const DeviceStats& s1 = dev_->stats();
    usage_.record_transfers(op, where, phase_ == Phase::Prefill, s1.uploads - s0.uploads, s1.upload_bytes - s0.upload_bytes,
                            s1.downloads - s0.downloads, s1.download_bytes - s0.download_bytes);
  };
  if (validate_ && v.family != "reference") validation_.run(ctx_, op, v, a, layer_, where, run_variant);
  else run_variant();
  if (validate_ && !allow_nonfinite_) {
    // The first op whose output goes non-finite, named before any later op trips over its values (a NaN router
    // logit makes the Vulkan router's expert ids -1, which the next op's reference then refuses).
    std::vector<std::string> names = def.outputs_set(a);
    names.insert(names.end(), def.states.begin(), def.states.end());
    for (const std::string& n : names) {
      const Tensor& t = a.t.at(n);
      if (t.type() != Tensor::Type::F32) continue;
      const int64_t rows = std::find(def.states.begin(), def.states.end(), n) != def.states.end() && a.p.count("kv_len")
                               ? a.iparam("kv_len") + a.in(def.inputs.at(0)).rows()
                               : t.rows();
      const auto m = t.f32().topRows(std::min(rows, t.rows()));
      if (m.allFinite()) continue;
      fail("non-finite values: op {} ({}) at {} produced {} NaN/Inf of {} values in '{}'; --allow-nonfinite lets them through",
           op, v.name, layer_ < 0 ? std::string("model level") : fmt::format("layer {} ({})", layer_, where),
           m.size() - m.array().isFinite().count(), m.size(), n);
    }
  }
}

bool PlanExecutor::can_capture() const {
  if (!dev_ || validate_ || profiling_) return false;
  for (const OpDef& op : Registry::get().ops()) {
    const Variant& v = plan_.variant(op.name);
    const bool capturable = v.capturable && (!v.capturable_on || v.capturable_on(*dev_));
    if (!(v.needs_device && capturable) && !(v.family == "reference" && !op.parts.empty())) return false;
  }
  return true;
}

void PlanExecutor::begin_capture(const void* owner) {
  if (!dev_) fail("decode replay needs a Vulkan device");
  if (validate_ || profiling_) fail("decode replay does not combine with validate mode or per-op profiling");
  graph_ = std::make_unique<DecodeGraph>(*dev_, owner);
}

void PlanExecutor::end_capture(const Tensor& logits) {
  if (!capturing()) fail("end_capture without begin_capture");
  graph_->end(logits);
}

Tensor PlanExecutor::replay_decode(int32_t token, int64_t pos, const void* owner) {
  if (!has_capture()) fail("replay_decode before a captured step");
  if (graph_->owner() != owner) fail("replay_decode: the captured step belongs to another forward pass (its states)");
  begin_step(Phase::Decode);
  return graph_->replay(token, pos);
}

Tensor PlanExecutor::replay_decode(const Tensor& ids, int64_t pos, const void* owner) {
  if (!has_capture()) fail("replay_decode before a captured step");
  if (graph_->owner() != owner) fail("replay_decode: the captured step belongs to another forward pass (its states)");
  begin_step(Phase::Decode);
  return graph_->replay(ids, pos);
}

void PlanExecutor::grow_cache(Tensor& cache, int64_t rows_needed, int64_t cols) {
  if (cache.rows() >= rows_needed) return;
  const int64_t cap = std::max<int64_t>({rows_needed, 2 * cache.rows(), 64});
  if (cache.device_current() && dev_) {
    Tensor bigger = Tensor::device(*dev_, cap, cols);
    dev_->copy(cache.buffer(*dev_), bigger.buffer_mut(*dev_), cache.bytes());
    cache = bigger;
  } else {
    Mat<float> m = Mat<float>::Zero(cap, cols);
    m.topRows(cache.rows()) = cache.f32();
    cache = Tensor::from(std::move(m));
  }
}

Tensor PlanExecutor::embed(const WeightRef& table, const std::vector<int32_t>& tokens) {
  IMat ids(1, int64_t(tokens.size()));
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= table.rows)
      fail("token id {} at position {} is outside the vocabulary [0, {})", tokens[i], i, table.rows);
    ids(0, int64_t(i)) = tokens[i];
  }
  OpArgs a{{{"tokens", Tensor::from_i32(ids)}}, {{"table", table}}, {}};
  run("embed", a, [this, table](int32_t token, int64_t) {
    if (const Tensor* ids = graph_ ? graph_->token_ids() : nullptr) {  // replay(ids, pos): the id read on the device
      OpArgs b{{{"tokens", *ids}}, {{"table", table}}, {}};
      run("embed", b);
      return b.t.at("y");
    }
    return embed(table, {token});
  });
  return a.t.at("y");
}

Tensor PlanExecutor::rmsnorm(const Tensor& x, const WeightRef& gain, double eps) {
  OpArgs a{{{"x", x}}, {{"gain", gain}}, {{"eps", eps}}};
  run("rmsnorm", a);
  return a.t.at("y");
}

Tensor PlanExecutor::matmul(const Tensor& x, const WeightRef& w) {
  OpArgs a{{{"x", x}}, {{"w", w}}, {}};
  run("matmul", a);
  return a.t.at("y");
}

bool PlanExecutor::fuses_matmul_group(const std::vector<WeightRef>& ws, Phase phase) const {
  if (phase != Phase::Decode || !fuses("matmul_group")) return false;
  return plan_.variant("matmul_group").name != "vulkan:qmatvec_direct" || matmul_group_takes(ws);
}

std::vector<Tensor> PlanExecutor::matmul_group(const Tensor& x, const std::vector<WeightRef>& ws) {
  OpArgs a{{{"x", x}}, {}, {}};
  for (size_t i = 0; i < ws.size(); ++i) a.w.emplace(fmt::format("w{}", i), ws[i]);
  run("matmul_group", a);
  std::vector<Tensor> ys;
  for (size_t i = 0; i < ws.size(); ++i) ys.push_back(a.t.at(fmt::format("y{}", i)));
  return ys;
}

void PlanExecutor::prefetch(const Tensor& after, const std::vector<WeightRef>& ws, Phase phase) {
  if (phase != Phase::Decode || !dev_ || validate_ || !after.device_current() || dev_->tune("decode.prefetch") == 0)
    return;
  std::vector<PrefetchRange> ranges;
  for (const WeightRef& w : ws)
    if (vk_quant_decodes(w)) {
      const Tensor raw = weights_.device_raw(w);
      ranges.push_back({raw.buffer(*dev_), 0, uint64_t(raw.bytes())});
    }
  if (ranges.empty()) return;
  gpu::prefetch(*dev_, after.buffer(*dev_), ranges);
}

Tensor PlanExecutor::lm_head(const Tensor& x, const WeightRef& w) {
  OpArgs a{{{"x", x}}, {{"w", w}}, {}};
  run("lm_head", a);
  return a.t.at("y");
}

Tensor PlanExecutor::add(const Tensor& x, const Tensor& y) {
  OpArgs a{{{"a", x}, {"b", y}}, {}, {}};
  run("add", a);
  return a.t.at("y");
}

PlanExecutor::AddNorm PlanExecutor::add_rmsnorm(const Tensor& x, const Tensor& a_, const WeightRef& gain, double eps,
                                                const Tensor* b) {
  OpArgs a{{{"x", x}, {"a", a_}}, {{"gain", gain}}, {{"eps", eps}}};
  if (b) a.set("b", *b);
  run("add_rmsnorm", a);
  return {a.t.at("y"), a.t.at("n")};
}

Tensor PlanExecutor::last_row(const Tensor& x) {
  if (x.device_current() && dev_) {
    Tensor y = Tensor::device(*dev_, 1, x.cols());
    dev_->copy(x.buffer(*dev_), y.buffer_mut(*dev_), y.bytes(), x.bytes() - y.bytes());
    return y;
  }
  return Tensor::from(x.f32().bottomRows(1));
}

Tensor PlanExecutor::slice(const Tensor& x, int64_t period, int64_t offset, int64_t width) {
  OpArgs a{{{"x", x}}, {}, {{"period", double(period)}, {"offset", double(offset)}, {"width", double(width)}}};
  run("slice", a);
  return a.t.at("y");
}

Tensor PlanExecutor::rope(const Tensor& x, int head_dim, int rot_dims, double theta, int64_t pos0) {
  OpArgs a{{{"x", x}}, {}, {{"head_dim", head_dim}, {"rot_dims", rot_dims}, {"theta", theta}, {"pos0", double(pos0)}}};
  run("rope", a, [this, x, head_dim, rot_dims, theta](int32_t, int64_t pos) { return rope(x, head_dim, rot_dims, theta, pos); });
  return a.t.at("y");
}

Tensor PlanExecutor::attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& gate, LayerState& st,
                               int nq, int nkv) {
  if (capturing()) graph_->begin_live();  // growing the cache belongs to the live part of a captured step
  grow_cache(st.k_cache, st.kv_len + q.rows(), k.cols());
  grow_cache(st.v_cache, st.kv_len + q.rows(), v.cols());
  OpArgs a{{{"q", q}, {"k", k}, {"v", v}, {"gate", gate}, {"k_cache", st.k_cache}, {"v_cache", st.v_cache}},
           {},
           {{"n_q_heads", nq}, {"n_kv_heads", nkv}, {"kv_len", double(st.kv_len)}}};
  run("attention", a, [this, q, k, v, gate, &st, nq, nkv](int32_t, int64_t) { return attention(q, k, v, gate, st, nq, nkv); });
  st.kv_len += q.rows();
  return a.t.at("o");
}

PlanExecutor::AttentionPrep PlanExecutor::attention_prep(const Tensor& qg, const Tensor& k, const WeightRef& q_norm,
                                                         const WeightRef& k_norm, int nq, int rot_dims, double theta,
                                                         int64_t pos0, double eps) {
  OpArgs a{{{"qg", qg}, {"k", k}},
           {{"q_norm", q_norm}, {"k_norm", k_norm}},
           {{"n_q_heads", nq}, {"rot_dims", rot_dims}, {"theta", theta}, {"pos0", double(pos0)}, {"eps", eps}}};
  run("attention_prep", a);
  return {a.t.at("q"), a.t.at("gate"), a.t.at("k")};
}

Tensor PlanExecutor::attention_decode(const Tensor& qg, const Tensor& k, const Tensor& v, const WeightRef& q_norm,
                                      const WeightRef& k_norm, LayerState& st, int nq, int nkv, int rot_dims, double theta,
                                      int64_t pos0, double eps) {
  if (capturing()) graph_->begin_live();  // growing the cache belongs to the live part of a captured step
  grow_cache(st.k_cache, st.kv_len + qg.rows(), k.cols());
  grow_cache(st.v_cache, st.kv_len + qg.rows(), v.cols());
  OpArgs a{{{"qg", qg}, {"k", k}, {"v", v}, {"k_cache", st.k_cache}, {"v_cache", st.v_cache}},
           {{"q_norm", q_norm}, {"k_norm", k_norm}},
           {{"n_q_heads", nq}, {"n_kv_heads", nkv}, {"kv_len", double(st.kv_len)}, {"rot_dims", rot_dims}, {"theta", theta},
            {"pos0", double(pos0)}, {"eps", eps}}};
  run("attention_decode", a, [this, qg, k, v, q_norm, k_norm, &st, nq, nkv, rot_dims, theta, eps](int32_t, int64_t pos) {
    return attention_decode(qg, k, v, q_norm, k_norm, st, nq, nkv, rot_dims, theta, pos, eps);
  });
  st.kv_len += qg.rows();
  return a.t.at("o");
}

Tensor PlanExecutor::ssm_conv(const Tensor& x, const WeightRef& w, LayerState& st) {
  OpArgs a{{{"x", x}, {"state", st.conv}}, {{"w", w}}, {}};
  run("ssm_conv", a);
  return a.t.at("y");
}

Tensor PlanExecutor::l2norm(const Tensor& x, int d, double scale, double eps) {
  OpArgs a{{{"x", x}}, {}, {{"head_dim", d}, {"scale", scale}, {"eps", eps}}};
  run("l2norm", a);
  return a.t.at("y");
}

PlanExecutor::Gates PlanExecutor::ssm_gates(const Tensor& b, const Tensor& a_, const WeightRef& A,
                                            const WeightRef& dt_bias) {
  OpArgs a{{{"b", b}, {"a", a_}}, {{"A", A}, {"dt_bias", dt_bias}}, {}};
  run("ssm_gates", a);
  return {a.t.at("beta"), a.t.at("g")};
}

PlanExecutor::GdnPrep PlanExecutor::gdn_prep(const Tensor& x, const Tensor& b, const Tensor& a_, const WeightRef& conv,
                                              const WeightRef& A, const WeightRef& dt_bias, LayerState& st, int nk, int dk,
                                              double scale, double eps) {
  OpArgs a{{{"x", x}, {"b", b}, {"a", a_}, {"state", st.conv}},
           {{"w", conv}, {"A", A}, {"dt_bias", dt_bias}},
           {{"n_k_heads", nk}, {"head_dim", dk}, {"scale", scale}, {"eps", eps}}};
  run("gdn_prep", a);
  return {a.t.at("q"), a.t.at("k"), a.t.at("v"), {a.t.at("beta"), a.t.at("g")}};
}

Tensor PlanExecutor::ssm_scan(const Tensor& q, const Tensor& k, const Tensor& v, const Gates& g, LayerState& st, int nk,
                              Phase phase, ref::HeadOrder order) {
  const double chunk = scan_.prefill_form == ScanForm::Recurrent ? 0 : scan_.chunk;
  OpArgs a{{{"q", q}, {"k", k}, {"v", v}, {"beta", g.beta}, {"g", g.g}, {"state", st.ssm}},
           {},
           {{"n_k_heads", nk}, {"decode", phase == Phase::Decode ? 1.0 : 0.0}, {"chunk", chunk},
            {"tiled", order == ref::HeadOrder::Tiled ? 1.0 : 0.0}}};
  run("ssm_scan", a);
  return a.t.at("o");
}

Tensor PlanExecutor::gated_rmsnorm(const Tensor& o, const Tensor& z, const WeightRef& gain, double eps) {
  OpArgs a{{{"o", o}, {"z", z}}, {{"gain", gain}}, {{"eps", eps}}};
  run("gated_rmsnorm", a);
  return a.t.at("y");
}

Tensor PlanExecutor::gdn_output(const Tensor& q, const Tensor& k, const Tensor& v, const Gates& g, const Tensor& z,
                                const WeightRef& gain, LayerState& st, int nk, ref::HeadOrder order, double eps) {
  OpArgs a{{{"q", q}, {"k", k}, {"v", v}, {"beta", g.beta}, {"g", g.g}, {"z", z}, {"state", st.ssm}},
           {{"gain", gain}},
           {{"n_k_heads", nk}, {"decode", phase_ == Phase::Decode ? 1.0 : 0.0}, {"chunk", double(scan_.chunk)},
            {"tiled", order == ref::HeadOrder::Tiled ? 1.0 : 0.0}, {"eps", eps}}};
  run("gdn_output", a);
  return a.t.at("y");
}

PlanExecutor::GdnDecode PlanExecutor::gdn_decode(const Tensor& x, const Tensor& b, const Tensor& a_, const Tensor& z,
                                                 const WeightRef& conv, const WeightRef& A, const WeightRef& dt_bias,
                                                 const WeightRef& gain, LayerState& st, int nk, int dk, double scale,
                                                 double l2_eps, bool tiled, double eps, int parts) {
  OpArgs a{{{"x", x}, {"b", b}, {"a", a_}, {"z", z}, {"conv_state", st.conv}, {"state", st.ssm}},
           {{"w", conv}, {"A", A}, {"dt_bias", dt_bias}, {"gain", gain}},
           {{"n_k_heads", nk}, {"head_dim", dk}, {"scale", scale}, {"l2_eps", l2_eps}, {"tiled", tiled ? 1.0 : 0.0}, {"eps", eps},
            {"norm", parts > 0 ? 0.0 : 1.0}, {"parts", double(parts)}}};
  run("gdn_decode", a);
  if (parts > 0) return {a.t.at("y"), a.t.at("sumsq")};
  return {a.t.at("y"), std::nullopt};
}

int PlanExecutor::gdn_norm_parts(const WeightRef& w, int64_t dv, Phase phase) const {
  if (!fuses_gdn_decode(phase) || !fuses("rms_scaled_matmul")) return 0;
  if (plan_.variant("rms_scaled_matmul").name == "vulkan:fused_decode" && !rms_scaled_matmul_fused_takes(w, dv)) return 0;
  const int parts = dev_ ? int(dev_->tune("decode.gdn_norm_parts")) : 1;  // 0: the norm stays in the step
  return parts == 0 || dv % parts == 0 ? parts : 1;
}

Tensor PlanExecutor::rms_scaled_matmul(const Tensor& x, const Tensor& sumsq, int parts, double eps, const WeightRef& w) {
  OpArgs a{{{"x", x}, {"sumsq", sumsq}}, {{"w", w}}, {{"parts", double(parts)}, {"eps", eps}}};
  run("rms_scaled_matmul", a);
  return a.t.at("y");
}

PlanExecutor::Routes PlanExecutor::moe_router(const Tensor& logits, int k) {
  OpArgs a{{{"logits", logits}}, {}, {{"k", k}}};
  run("moe_router", a);
  return {a.t.at("expert"), a.t.at("weight")};
}

Tensor PlanExecutor::moe_experts(const Tensor& x, const Routes& r, const MoeWeights& w) {
  OpArgs a{{{"x", x}, {"expert", r.expert}, {"weight", r.weight}},
           {{"gate", w.experts.gate}, {"up", w.experts.up}, {"down", w.experts.down}},
           {{"n_experts", w.n_experts}}};
  run("moe_experts", a);
  return a.t.at("y");
}

bool PlanExecutor::fuses_moe_block(const MoeWeights& w, Phase phase) const {
  if (phase != Phase::Decode || !fuses("moe_block")) return false;
  return plan_.variant("moe_block").name != "vulkan:fused_decode" || moe_block_fused_takes(w.router, w.experts, w.shared);
}

Tensor PlanExecutor::moe_block(const Tensor& x, const MoeWeights& w, int k) {
  OpArgs a{{{"x", x}},
           {{"router", w.router}, {"gate", w.experts.gate}, {"up", w.experts.up}, {"down", w.experts.down},
            {"sgate", w.shared.gate}, {"sup", w.shared.up}, {"sdown", w.shared.down}, {"gate_w", w.shared_gate}},
           {{"k", k}, {"n_experts", w.n_experts}}};
  run("moe_block", a);
  return a.t.at("y");
}

bool PlanExecutor::fuses_add_rmsnorm_matmul_group(const std::vector<WeightRef>& ws, Phase phase) const {
  // On top of fused projections only: 'matmul_group=reference' runs a matmul per weight, after the add and norm.
  if (!defers_add_rmsnorm("matmul_group", phase) || !fuses_matmul_group(ws, phase)) return false;
  return plan_.variant("add_rmsnorm_matmul_group").name != "vulkan:fused_decode" || matmul_group_takes(ws);
}

PlanExecutor::AddNormGroup PlanExecutor::add_rmsnorm_matmul_group(const Tensor& x, const Tensor& a_, const WeightRef& gain,
                                                                  double eps, const std::vector<WeightRef>& ws) {
  OpArgs a{{{"x", x}, {"a", a_}}, {{"gain", gain}}, {{"eps", eps}}};
  for (size_t i = 0; i < ws.size(); ++i) a.w.emplace(fmt::format("w{}", i), ws[i]);
  run("add_rmsnorm_matmul_group", a);
  AddNormGroup r{a.t.at("s"), {}};
  for (size_t i = 0; i < ws.size(); ++i) r.ys.push_back(a.t.at(fmt::format("y{}", i)));
  return r;
}

bool PlanExecutor::fuses_add_rmsnorm_moe_block(const MoeWeights& w, Phase phase) const {
  if (!defers_add_rmsnorm("moe_block", phase) || !fuses_moe_block(w, phase)) return false;  // on top of a fused block only
  return plan_.variant("add_rmsnorm_moe_block").name != "vulkan:fused_decode" ||
         moe_block_fused_takes(w.router, w.experts, w.shared);
}

PlanExecutor::AddNormBlock PlanExecutor::add_rmsnorm_moe_block(const Tensor& x, const Tensor& a_, const WeightRef& gain,
                                                               double eps, const MoeWeights& w, int k) {
  OpArgs a{{{"x", x}, {"a", a_}},
           {{"gain", gain}, {"router", w.router}, {"gate", w.experts.gate}, {"up", w.experts.up}, {"down", w.experts.down},
            {"sgate", w.shared.gate}, {"sup", w.shared.up}, {"sdown", w.shared.down}, {"gate_w", w.shared_gate}},
           {{"k", k}, {"n_experts", w.n_experts}, {"eps", eps}}};
  run("add_rmsnorm_moe_block", a);
  return {a.t.at("s"), a.t.at("y")};
}

Tensor PlanExecutor::shared_expert(const Tensor& x, const MoeWeights& w) {
  OpArgs a{{{"x", x}}, {{"gate", w.shared.gate}, {"up", w.shared.up}, {"down", w.shared.down}, {"gate_w", w.shared_gate}}, {}};
  run("shared_expert", a);
  return a.t.at("y");
}

}  // namespace hl::gpu
