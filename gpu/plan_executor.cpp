#include "gpu/plan_executor.h"

#include "gpu/ops/vk_op.h"  // vk_quant_decodes (folded norms)

#include <chrono>

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
    s.conv = Tensor::host(c.conv_kernel - 1, c.conv_dim());
    s.ssm = Tensor::host(c.lin_v_heads, int64_t(c.lin_k_dim) * c.lin_v_dim);
    if (dev_ && context_ > 0) s.conv.buffer(*dev_), s.ssm.buffer(*dev_);  // zeros, on the device now
  }
  return s;
}

void PlanExecutor::begin_step(Phase phase) {
  phase_ = phase;
  layer_ = -1;
  // Level scheduling (gpu/device.h) pays where the kernels are short and latency-bound (decode); a prefill
  // chunk's kernels fill the GPU alone. H200, 8-layer model, one machine: decode tg64 561 vs 527 tok/s with it,
  // prefill pp512 6200 vs 6420 (reports/nvidia-h200/end_to_end.md).
  if (dev_) dev_->set_reorder(dev_->tune("device.stream.reorder") != 0 &&
                              (phase == Phase::Decode || dev_->tune("device.stream.reorder_prefill") != 0));
  fold_.reset();
}

void PlanExecutor::begin_layer(int layer, LayerKind kind) {
  layer_ = layer;
  kind_ = kind;
}

void PlanExecutor::run(const std::string& op, OpArgs& a) {
  const bool folded = fold_ && fold_norm(op, a);
  run_variant(op, a, folded ? Registry::get().variant(op, "vulkan:qmatvec_direct") : plan_.variant(op));
  if (folded && a.t.count("sum")) {  // the first projection of a folded norm: its sum and normed row
    fold_->sum.alias(a.t.at("sum"));
    fold_->normed.alias(a.t.at("normed"));
    fold_->written = true;
  }
}

void PlanExecutor::run_variant(const std::string& op, OpArgs& a, const Variant& v) {
  const std::string where =
      layer_ < 0 ? "model" : (kind_ == LayerKind::FullAttention ? "full-attention" : "gated-deltanet");
  used_[{op, where, phase_ == Phase::Prefill ? "prefill" : "decode"}].insert(v.name);
  if (v.per_token && phase_ == Phase::Prefill) prefill_fallbacks_.insert(op + "=" + v.name + " (" + where + ")");
  if (capturing_ && (op == "embed" || op == "rope" || op == "attention")) return capture_live(op, a, v);
  if (profiling_) {
    if (v.needs_device) {
      if (pending_.size() >= 1800) op_times();  // the device's query slots are reused after 4096
      const uint32_t q0 = dev_->timestamp();
      v.run(ctx_, a);
      pending_.push_back({op, q0, dev_->timestamp()});
    } else {
      if (dev_) dev_->sync();  // so the host op's wall time leaves out device work queued before it
      const auto t0 = std::chrono::steady_clock::now();
      v.run(ctx_, a);
      auto& t = times_[op];
      t.ns += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
      t.calls++;
    }
    return;
  }
  if (!validate_ || v.family == "reference") {
    v.run(ctx_, a);
    return;
  }
  // Shadow: the reference runs on host copies of exactly the inputs and states the variant saw.
  OpArgs ref = a;
  for (auto& [name, t] : ref.t) t = t.clone();
  v.run(ctx_, a);
  Registry::get().variant(op, "reference").run(ctx_, ref);
  const OpDef& def = Registry::get().op(op);
  // Cache-like states have a capacity: only rows [0, kv_len + T) hold data.
  const int64_t rows = a.p.count("kv_len") ? a.iparam("kv_len") + a.in("q").rows() : -1;
  stats_[op].calls++;
  for (auto& name : def.outputs) compare(op, name, a.t.at(name), ref.t.at(name), -1);
  for (auto& name : def.states) compare(op, name, a.t.at(name), ref.t.at(name), rows);
}

bool PlanExecutor::can_capture() const {
  if (!dev_ || validate_ || profiling_) return false;
  for (const OpDef& op : Registry::get().ops()) {
    const Variant& v = plan_.variant(op.name);
    const bool composite_unfused = v.family == "reference" && (op.name == "gdn_prep" || op.name == "add_rmsnorm");
    if (!v.needs_device && !composite_unfused) return false;
  }
  return true;
}

void PlanExecutor::begin_capture(const void* owner) {
  if (!dev_) fail("decode replay needs a Vulkan device");
  if (validate_ || profiling_) fail("decode replay does not combine with validate mode or per-op profiling");
  graph_ = std::make_unique<Graph>();
  graph_->owner = owner;
  dev_->begin_capture();
  capturing_ = true;
}

void PlanExecutor::capture_live(const std::string& op, OpArgs& a, const Variant& v) {
  // The cut before the op (attention made its own, before growing the KV cache: that is live work too).
  if (op != "attention")
    if (auto seg = dev_->end_segment()) graph_->items.emplace_back(std::move(seg));
  v.run(ctx_, a);
  if (auto seg = dev_->end_segment()) graph_->live_segments.push_back(std::move(seg));
  LiveOp l{op, a, op == "attention" ? attention_state_ : nullptr, a.t.at(op == "attention" ? "o" : "y")};
  if (!l.out.device_current()) fail("decode replay: {} ran on the host; replay needs every op on the device", op);
  graph_->items.emplace_back(std::move(l));
}

void PlanExecutor::end_capture(const Tensor& logits) {
  if (!capturing_) fail("end_capture without begin_capture");
  if (auto seg = dev_->end_segment()) graph_->items.emplace_back(std::move(seg));
  dev_->end_capture();
  capturing_ = false;
  if (!logits.device_current()) fail("decode replay: the logits are not on the device");
  graph_->logits = logits;
  // The captured step itself: its segments and its live ops' commands, in order.
  size_t live = 0;
  for (auto& item : graph_->items) {
    if (auto* seg = std::get_if<std::shared_ptr<Device::Segment>>(&item)) dev_->submit(*seg, false);
    else dev_->submit(graph_->live_segments.at(live++), false);
  }
  dev_->sync();
  graph_->live_segments.clear();
}

Tensor PlanExecutor::replay_decode(int32_t token, int64_t pos, const void* owner) {
  if (!graph_) fail("replay_decode before a captured step");
  if (graph_->owner != owner) fail("replay_decode: the captured step belongs to another forward pass (its states)");
  begin_step(Phase::Decode);
  for (auto& item : graph_->items) {
    if (auto* seg = std::get_if<std::shared_ptr<Device::Segment>>(&item)) {
      dev_->submit(*seg);
      continue;
    }
    LiveOp& l = std::get<LiveOp>(item);
    Tensor y;
    if (l.op == "embed") {
      y = embed(l.args.weight("table"), {token});
    } else if (l.op == "rope") {
      y = rope(l.args.in("x"), int(l.args.iparam("head_dim")), int(l.args.iparam("rot_dims")), l.args.param("theta"), pos);
    } else {
      y = attention(l.args.in("q"), l.args.in("k"), l.args.in("v"), l.args.in("gate"), *l.state, int(l.args.iparam("n_q_heads")),
                    int(l.args.iparam("n_kv_heads")));
    }
    dev_->copy(y.buffer(*dev_), l.out.buffer_mut(*dev_), l.out.bytes());  // buffer_mut: any host copy is stale now
  }
  dev_->flush();
  graph_->logits.buffer_mut(*dev_);  // rewritten by the last segment: a host copy from an earlier step is stale
  return graph_->logits;
}

void PlanExecutor::compare(const std::string& op, const std::string& name, const Tensor& got, const Tensor& want,
                           int64_t rows) {
  OpErrorStats& s = stats_[op];
  if (got.rows() != want.rows() || got.cols() != want.cols() || got.type() != want.type())
    fail("validate: {} output '{}' is [{}, {}], the reference's [{}, {}]", op, name, got.rows(), got.cols(), want.rows(),
         want.cols());
  if (rows < 0) rows = got.rows();
  if (got.type() == Tensor::Type::I32) {
    s.ids_total += rows * got.cols();
    s.ids_mismatch += (got.i32().topRows(rows).array() != want.i32().topRows(rows).array()).count();
    return;
  }
  const auto g = got.f32().topRows(rows), w = want.f32().topRows(rows);
  const int64_t bad = g.size() - g.array().isFinite().count();
  if (bad) {
    s.nonfinite += bad;
    if (s.first_nonfinite_layer == -2) {
      s.first_nonfinite_layer = layer_;
      nonfinite_order_.emplace_back(op, layer_);
    }
    return;
  }
  const double abs = g.size() ? max_abs(g, w) : 0, rel = rel_l2(g, w);
  s.max_abs = std::max(s.max_abs, abs);
  if (rel >= s.max_rel_l2) {
    s.max_rel_l2 = rel;
    s.worst_layer = layer_;
    s.worst_output = name;
  }
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

const std::map<std::string, PlanExecutor::OpTime>& PlanExecutor::op_times() {
  if (!pending_.empty()) {
    dev_->sync();
    for (auto& p : pending_) {
      auto& t = times_[p.op];
      t.ns += dev_->elapsed_ns(p.begin, p.end);
      t.calls++;
      t.gpu = true;
    }
    pending_.clear();
  }
  return times_;
}

Tensor PlanExecutor::embed(const WeightRef& table, const std::vector<int32_t>& tokens) {
  IMat ids(1, int64_t(tokens.size()));
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= table.rows)
      fail("token id {} at position {} is outside the vocabulary [0, {})", tokens[i], i, table.rows);
    ids(0, int64_t(i)) = tokens[i];
  }
  OpArgs a{{{"tokens", Tensor::from_i32(ids)}}, {{"table", table}}, {}};
  run("embed", a);
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
  if (fold_ && !fold_->written) materialize_norm();  // the last one's placeholders may be among the inputs
  const std::string& mv = plan_.variant("matmul").name;
  if (dev_ && phase_ == Phase::Decode && !validate_ && dev_->tune("add_rmsnorm.fold") != 0 &&
      plan_.variant("add_rmsnorm").needs_device && (mv == "vulkan:auto" || mv == "vulkan:qmatvec_direct")) {
    fold_ = FoldedNorm{x, a_, b ? *b : Tensor(), gain, eps, Tensor::host(x.rows(), x.cols()), Tensor::host(x.rows(), x.cols())};
    return {fold_->sum, fold_->normed};
  }
  fold_.reset();
  OpArgs a{{{"x", x}, {"a", a_}}, {{"gain", gain}}, {{"eps", eps}}};
  if (b) a.set("b", *b);
  run("add_rmsnorm", a);
  return {a.t.at("y"), a.t.at("n")};
}

bool PlanExecutor::fold_norm(const std::string& op, OpArgs& a) {
  FoldedNorm& f = *fold_;
  const auto is = [](const Tensor& t, const Tensor& p) { return t.valid() && t.id() == p.id(); };
  if ((op == "matmul" || op == "lm_head") && a.t.size() == 1 && a.t.count("x") && is(a.t.at("x"), f.normed)) {
    // Where vulkan:qmatvec_direct can run it: the plan leaves the choice to auto or picks it, the weight's rows
    // decode, x fits its shared memory, and the step is a mat-vec.
    const std::string& pv = plan_.variant(op).name;
    const WeightRef& w = a.weight("w");
    if ((pv == "vulkan:auto" || pv == "vulkan:qmatvec_direct") && vk_quant_decodes(w) && w.cols % 4 == 0 &&
        uint64_t(w.cols) * 4 <= dev_->info().max_shared_memory &&
        f.x.rows() <= int64_t(dev_->tune("matmul.auto.qmatvec_tokens"))) {
      a.t.erase("x");
      a.set("norm_x", f.x);
      a.set("norm_a", f.a);
      if (f.b.valid()) a.set("norm_b", f.b);
      a.w.emplace("norm_gain", f.gain);
      a.p["norm_eps"] = f.eps;
      a.p["norm_out"] = f.written ? 0 : 1;
      if (!f.written) ++folded_norms_;
      return true;
    }
  }
  if (!f.written)
    for (auto& [name, t] : a.t)
      if (is(t, f.sum) || is(t, f.normed)) {
        materialize_norm();
        break;
      }
  return false;
}

void PlanExecutor::materialize_norm() {
  FoldedNorm& f = *fold_;
  OpArgs m{{{"x", f.x}, {"a", f.a}}, {{"gain", f.gain}}, {{"eps", f.eps}}};
  if (f.b.valid()) m.set("b", f.b);
  f.written = true;  // first: the run below must not come back here
  run("add_rmsnorm", m);
  f.sum.alias(m.t.at("y"));
  f.normed.alias(m.t.at("n"));
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
  run("rope", a);
  return a.t.at("y");
}

Tensor PlanExecutor::attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& gate, LayerState& st,
                               int nq, int nkv) {
  if (capturing_)  // growing the cache belongs to the live part of a captured step, not to the segment before it
    if (auto seg = dev_->end_segment()) graph_->items.emplace_back(std::move(seg));
  grow_cache(st.k_cache, st.kv_len + q.rows(), k.cols());
  grow_cache(st.v_cache, st.kv_len + q.rows(), v.cols());
  OpArgs a{{{"q", q}, {"k", k}, {"v", v}, {"gate", gate}, {"k_cache", st.k_cache}, {"v_cache", st.v_cache}},
           {},
           {{"n_q_heads", nq}, {"n_kv_heads", nkv}, {"kv_len", double(st.kv_len)}}};
  attention_state_ = &st;
  run("attention", a);
  attention_state_ = nullptr;
  st.kv_len += q.rows();
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

Tensor PlanExecutor::shared_expert(const Tensor& x, const MoeWeights& w) {
  OpArgs a{{{"x", x}}, {{"gate", w.shared.gate}, {"up", w.shared.up}, {"down", w.shared.down}, {"gate_w", w.shared_gate}}, {}};
  run("shared_expert", a);
  return a.t.at("y");
}

std::string PlanExecutor::usage_report() const {
  std::string s = fmt::format("{:<14} {:<15} {:<8} {}\n", "op", "where", "phase", "variant");
  for (auto& [key, vs] : used_) {
    auto& [op, where, phase] = key;
    std::string names;
    for (auto& v : vs) names += (names.empty() ? "" : ", ") + v;
    s += fmt::format("{:<14} {:<15} {:<8} {}\n", op, where, phase, names);
  }
  if (prefill_fallbacks_.empty()) {
    s += "prefill: no per-token fallback\n";
  } else {
    std::string f;
    for (auto& x : prefill_fallbacks_) f += (f.empty() ? "" : "; ") + x;
    s += "PER-TOKEN FALLBACK in prefill (these ops walked the prompt token by token): " + f + "\n";
  }
  return s;
}

bool PlanExecutor::prefill_fallback() const { return !prefill_fallbacks_.empty(); }

std::string PlanExecutor::validation_report() const {
  std::string s = fmt::format("{:<14} {:<20} {:>6} {:>11} {:>11} {:>11} {}\n", "op", "variant", "calls", "max abs",
                              "rel L2", "worst layer", "notes");
  for (auto& [op, st] : stats_) {
    std::string notes;
    if (st.nonfinite)
      notes += fmt::format("{} NaN/Inf values, first at layer {}; ", st.nonfinite, st.first_nonfinite_layer);
    if (st.ids_total)
      notes += fmt::format("routing agreement {:.4f} ({} of {} expert ids differ); ",
                           1.0 - double(st.ids_mismatch) / double(st.ids_total), st.ids_mismatch, st.ids_total);
    if (!st.worst_output.empty()) notes += "worst output '" + st.worst_output + "'";
    s += fmt::format("{:<14} {:<20} {:>6} {:>11.3e} {:>11.3e} {:>11} {}\n", op, plan_.variant(op).name, st.calls, st.max_abs,
                     st.max_rel_l2, st.worst_layer < 0 ? std::string("model") : std::to_string(st.worst_layer), notes);
  }
  // The op that produced the first NaN/Inf, then the first NaN/Inf of every other op, in the order they ran.
  auto at = [](int layer) { return layer < 0 ? std::string("model level (outside the layers)") : fmt::format("layer {}", layer); };
  for (size_t i = 0; i < nonfinite_order_.size(); ++i)
    s += i == 0 ? fmt::format("first NaN/Inf: op {} at {}", nonfinite_order_[i].first, at(nonfinite_order_[i].second))
                : fmt::format("{} op {} at {}", i == 1 ? "; then" : ",", nonfinite_order_[i].first, at(nonfinite_order_[i].second));
  if (!nonfinite_order_.empty()) s += "\n";
  return s;
}

}  // namespace hl::gpu
