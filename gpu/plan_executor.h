// The plan executor: runs the forward pass (reference/model/forward.h) with each op's variant chosen by a
// Plan, on f32 Tensors that stay wherever their producer left them (an all-Vulkan plan never returns to
// the host between ops). It records which variant ran for every op, layer kind and phase, and flags any
// per-token fallback in prefill. With validate on, it shadows every non-reference op with the reference on
// the same inputs (the variant's output is what flows on), keeping per-op error statistics.
#pragma once
#include <map>
#include <optional>
#include <set>
#include <variant>
#include <string>

#include "gpu/plan.h"
#include "model/config.h"
#include "ref_executor.h"

namespace hl::gpu {

struct OpErrorStats {
  int64_t calls = 0;
  double max_abs = 0, max_rel_l2 = 0;  // worst over calls and outputs
  int worst_layer = -1;                // layer of the worst relative error (-1: model-level)
  std::string worst_output;
  int64_t nonfinite = 0;                   // NaN/Inf values in the variant's outputs
  int first_nonfinite_layer = -2;          // -2: none
  int64_t ids_total = 0, ids_mismatch = 0;  // integer outputs (routed expert ids)
};

class PlanExecutor {
 public:
  using Tensor = hl::Tensor;
  struct Routes {
    Tensor expert, weight;
  };
  struct Gates {
    Tensor beta, g;
  };
  struct LayerState {
    Tensor k_cache, v_cache;  // [capacity, n_kv * D]; rows [0, kv_len) valid
    int64_t kv_len = 0;
    Tensor conv, ssm;
  };

  PlanExecutor(const Plan& plan, Device* dev, ScanOptions scan = {}, bool validate = false);

  // Per-op time: Vulkan variants by timestamps around their dispatches, host variants by wall clock after a
  // device sync (their time includes downloading their inputs, not the device work queued before them).
  void set_profiling(bool on) { profiling_ = on; }
  struct OpTime {
    double ns = 0;
    int64_t calls = 0;
    bool gpu = false;
  };
  const std::map<std::string, OpTime>& op_times();  // syncs and collects pending timestamps
  void reset_op_times() { op_times(), times_.clear(); }

  // Memory planned up front for forward passes made from now on: KV caches of `tokens` rows and the recurrent
  // states allocated on the device when a layer's state is made (0: on the host, moved and grown on demand).
  void set_context_capacity(int64_t tokens) { context_ = tokens; }
  int64_t context_capacity() const { return context_; }
  LayerState init_state(const ModelConfig& c, LayerKind kind) const;
  Mat<float> to_host(const Tensor& t) const { return t.f32(); }
  WeightStore& weights() { return weights_; }
  void begin_step(Phase phase);
  void begin_layer(int layer, LayerKind kind);

  Tensor embed(const WeightRef& table, const std::vector<int32_t>& tokens);
  Tensor rmsnorm(const Tensor& x, const WeightRef& gain, double eps);
  Tensor matmul(const Tensor& x, const WeightRef& w);
  Tensor lm_head(const Tensor& x, const WeightRef& w);
  Tensor add(const Tensor& a, const Tensor& b);
  Tensor last_row(const Tensor& x);  // a copy of the last row, on the side where x is current
  Tensor slice(const Tensor& x, int64_t period, int64_t offset, int64_t width);
  Tensor rope(const Tensor& x, int head_dim, int rot_dims, double theta, int64_t pos0);
  Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& gate, LayerState& st, int nq, int nkv);
  Tensor ssm_conv(const Tensor& x, const WeightRef& w, LayerState& st);
  Tensor l2norm(const Tensor& x, int d, double scale, double eps);
  Gates ssm_gates(const Tensor& b, const Tensor& a, const WeightRef& A, const WeightRef& dt_bias);
  // gdn_prep runs as one op when the plan picks a variant other than the reference; with the reference the
  // forward pass runs the separate ops it composes (ssm_conv, slice, l2norm, ssm_gates), each as the plan
  // picks it, so 'gdn_prep=reference' keeps the unfused path selectable under '*=vulkan'.
  struct GdnPrep {
    Tensor q, k, v;
    Gates gates;
  };
  // add_rmsnorm likewise: one op when the plan picks a non-reference variant; else add, then rmsnorm.
  bool fuses_add_rmsnorm() const { return plan_.variant("add_rmsnorm").family != "reference"; }
  struct AddNorm {
    Tensor sum, normed;
  };
  // In decode steps with add_rmsnorm.fold (a device tunable; off by default, see device_profile.cpp) the add_rmsnorm is folded into the
  // projections that read its normed output: it returns placeholders, each matmul/lm_head on the normed row runs
  // vulkan:qmatvec_direct computing the sum and the norm as it stages its input (the first one also writes them
  // into the placeholders), and any other op that reads a placeholder first has add_rmsnorm itself run. One
  // dependent dispatch fewer per add_norm (two per layer). Not in validate mode (each op is checked alone).
  AddNorm add_rmsnorm(const Tensor& x, const Tensor& a, const WeightRef& gain, double eps, const Tensor* b = nullptr);
  int64_t folded_norms() const { return folded_norms_; }  // add_rmsnorms folded into a projection so far
  bool fuses_gdn_prep() const { return plan_.variant("gdn_prep").family != "reference"; }
  GdnPrep gdn_prep(const Tensor& x, const Tensor& b, const Tensor& a, const WeightRef& conv, const WeightRef& A,
                   const WeightRef& dt_bias, LayerState& st, int nk, int dk, double scale, double eps);
  Tensor ssm_scan(const Tensor& q, const Tensor& k, const Tensor& v, const Gates& g, LayerState& st, int nk, Phase phase,
                  ref::HeadOrder order);
  Tensor gated_rmsnorm(const Tensor& o, const Tensor& z, const WeightRef& gain, double eps);
  Routes moe_router(const Tensor& logits, int k);
  Tensor moe_experts(const Tensor& x, const Routes& r, const MoeWeights& w);
  Tensor shared_expert(const Tensor& x, const MoeWeights& w);

  // Runs one op through the plan's variant (and the reference too, in validate mode).
  void run(const std::string& op, OpArgs& a);

  // Decode replay (Forward::capture_decode / replay_decode): a decode step is recorded once as command-list
  // segments, cut at the ops that depend on the token or the position (embed, rope, attention: "live" ops),
  // which are recorded afresh each step with the new token, position and KV length and copy their outputs into
  // the buffers the next segment reads. Everything else (projections, norms, MoE, the Gated DeltaNet with its
  // states updated in place) is replayed as recorded. Needs a Vulkan device; not with validate or profiling.
  // Whether decode can be captured: every op the forward pass may run is on the device (the fused ops' reference
  // variants count as their parts, each checked on its own).
  bool can_capture() const;
  // owner: the forward pass whose states the step uses; a replay for another one is an error.
  void begin_capture(const void* owner);
  void end_capture(const Tensor& logits);  // runs the captured step; logits: the step's result
  bool has_capture() const { return bool(graph_); }
  void drop_capture() { graph_.reset(); }
  // The captured step at `pos`; its logits (the same tensor each step).
  Tensor replay_decode(int32_t token, int64_t pos, const void* owner);

  std::string usage_report() const;       // which variant ran where; per-token fallbacks in prefill
  bool prefill_fallback() const;          // any per-token variant ran in a prefill step
  std::string validation_report() const;  // the per-op error table
  const std::map<std::string, OpErrorStats>& validation() const { return stats_; }

 private:
  void compare(const std::string& op, const std::string& name, const Tensor& got, const Tensor& want, int64_t rows);
  // The folded add_rmsnorm of this step (see add_rmsnorm): its inputs and its placeholders.
  struct FoldedNorm {
    Tensor x, a, b;  // b: empty without a second addend
    WeightRef gain;
    double eps = 0;
    Tensor sum, normed;
    bool written = false;  // the placeholders hold their values
  };
  std::optional<FoldedNorm> fold_;
  int64_t folded_norms_ = 0;
  // Before op `op` runs on `a`: whether it folds the pending norm (then `a` is rewritten for qmatvec_direct);
  // else, if it reads an unwritten placeholder, add_rmsnorm runs first.
  bool fold_norm(const std::string& op, OpArgs& a);
  void materialize_norm();
  void run_variant(const std::string& op, OpArgs& a, const Variant& v);
  void grow_cache(Tensor& cache, int64_t rows_needed, int64_t cols);

  const Plan& plan_;
  Device* dev_;
  ScanOptions scan_;
  bool validate_;
  WeightStore weights_;
  VariantCtx ctx_;
  Phase phase_ = Phase::Prefill;
  int layer_ = -1;
  LayerKind kind_ = LayerKind::LinearAttention;
  // (op, where, phase) -> variants that ran; where = "gated-deltanet", "full-attention" or "model"
  std::map<std::tuple<std::string, std::string, std::string>, std::set<std::string>> used_;
  std::set<std::string> prefill_fallbacks_;
  std::map<std::string, OpErrorStats> stats_;
  std::vector<std::pair<std::string, int>> nonfinite_order_;  // (op, layer) of each op's first NaN/Inf, as they ran
  bool profiling_ = false;
  struct PendingTime {
    std::string op;
    uint32_t begin, end;
  };
  std::vector<PendingTime> pending_;
  std::map<std::string, OpTime> times_;

  struct LiveOp {  // a token- or position-dependent op of a captured step
    std::string op;
    OpArgs args;           // as captured: inputs (segment outputs, fixed buffers), weights, parameters
    LayerState* state = nullptr;  // attention: the layer's KV cache
    Tensor out;            // the captured output, which later segments read: each replay copies into it
  };
  struct Graph {
    std::vector<std::variant<std::shared_ptr<Device::Segment>, LiveOp>> items;  // in step order
    std::vector<std::shared_ptr<Device::Segment>> live_segments;  // the capture step's own live commands
    Tensor logits;
    const void* owner = nullptr;
  };
  std::unique_ptr<Graph> graph_;
  bool capturing_ = false;
  int64_t context_ = 0;
  LayerState* attention_state_ = nullptr;  // the state of the attention op being run (for the capture)
  void capture_live(const std::string& op, OpArgs& a, const Variant& v);
};

}  // namespace hl::gpu
