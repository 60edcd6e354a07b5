// The plan executor: runs the forward pass (reference/model/forward.h) with each op's variant chosen by a
// Plan, on f32 Tensors that stay wherever their producer left them (an all-Vulkan plan never returns to
// the host between ops). Its op methods are the forward pass's executor interface; each builds the op's
// arguments and hands them to run(), which knows no op by name: it resolves the plan's variant to the kernel
// that runs (Registry::resolve), and records its use (usage.h), times it (profiling.h), shadows it with the
// reference in validate mode (validation.h) or records it into a replayable decode step (replay.h).
#pragma once
#include <memory>
#include <string>

#include "model/config.h"
#include "plan/plan.h"
#include "plan/profiling.h"
#include "plan/replay.h"
#include "plan/usage.h"
#include "plan/validation.h"
#include "ref_executor.h"

namespace hl::gpu {

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

  void set_profiling(bool on) { profiling_ = on; }
  // In validate mode every op's outputs are checked for NaN/Inf as it runs and the first one found stops the run
  // with a one-line error naming the op, its kernel and its layer; this lets them flow on instead.
  void set_allow_nonfinite(bool on) { allow_nonfinite_ = on; }
  using OpTime = Profiler::OpTime;
  const std::map<std::string, OpTime>& op_times() { return profiler_.times(dev_); }  // syncs
  void reset_op_times() { profiler_.reset(dev_); }

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
  // Composite ops (OpDef::parts: gdn_prep, add_rmsnorm) run as one op when the plan picks a variant other than the
  // reference; with the reference the forward pass runs their parts, each as the plan picks it, so
  // 'gdn_prep=reference' keeps the unfused path selectable under '*=vulkan'.
  bool fuses(const std::string& op) const { return plan_.variant(op).family != "reference"; }
  bool fuses_gdn_prep() const { return fuses("gdn_prep"); }
  bool fuses_add_rmsnorm() const { return fuses("add_rmsnorm"); }
  // moe_block fuses in decode only (prompt chunks gain more from route_pack's grouped GEMMs, which read each expert
  // once for all its tokens), and only where its variant takes the block's weights (whole 32-value units).
  bool fuses_moe_block(const MoeWeights& w, Phase phase) const;
  // matmul_group likewise: in decode (a prompt chunk's projections are GEMMs that fill the GPU alone), where its
  // variant takes the weights.
  bool fuses_matmul_group(const std::vector<WeightRef>& ws, Phase phase) const;
  std::vector<Tensor> matmul_group(const Tensor& x, const std::vector<WeightRef>& ws);
  Tensor moe_block(const Tensor& x, const MoeWeights& w, int k);
  struct GdnPrep {
    Tensor q, k, v;
    Gates gates;
  };
  GdnPrep gdn_prep(const Tensor& x, const Tensor& b, const Tensor& a, const WeightRef& conv, const WeightRef& A,
                   const WeightRef& dt_bias, LayerState& st, int nk, int dk, double scale, double eps);
  struct AddNorm {
    Tensor sum, normed;
  };
  AddNorm add_rmsnorm(const Tensor& x, const Tensor& a, const WeightRef& gain, double eps, const Tensor* b = nullptr);
  // The add and norm folded in front of their consumer instead (in decode, where the consumer's variant takes the
  // weights): add_rmsnorm_matmul_group (the next layer's input norm and its projections) and add_rmsnorm_moe_block
  // (the post-attention norm and the MoE block). The forward pass then leaves the add to the consumer (defers_add_rmsnorm).
  bool defers_add_rmsnorm(const std::string& consumer, Phase phase) const {
    return phase == Phase::Decode && fuses("add_rmsnorm_" + consumer);
  }
  bool fuses_add_rmsnorm_matmul_group(const std::vector<WeightRef>& ws, Phase phase) const;
  struct AddNormGroup {
    Tensor sum;
    std::vector<Tensor> ys;
  };
  AddNormGroup add_rmsnorm_matmul_group(const Tensor& x, const Tensor& a, const WeightRef& gain, double eps,
                                        const std::vector<WeightRef>& ws);
  bool fuses_add_rmsnorm_moe_block(const MoeWeights& w, Phase phase) const;
  struct AddNormBlock {
    Tensor sum, y;
  };
  AddNormBlock add_rmsnorm_moe_block(const Tensor& x, const Tensor& a, const WeightRef& gain, double eps, const MoeWeights& w,
                                     int k);
  Tensor ssm_scan(const Tensor& q, const Tensor& k, const Tensor& v, const Gates& g, LayerState& st, int nk, Phase phase,
                  ref::HeadOrder order);
  Tensor gated_rmsnorm(const Tensor& o, const Tensor& z, const WeightRef& gain, double eps);
  // gdn_output (ssm_scan, then gated_rmsnorm) as one op: in decode only (a prompt chunk's scan is the chunked form).
  bool fuses_gdn_output(Phase phase) const { return phase == Phase::Decode && fuses("gdn_output"); }
  Tensor gdn_output(const Tensor& q, const Tensor& k, const Tensor& v, const Gates& g, const Tensor& z, const WeightRef& gain,
                    LayerState& st, int nk, ref::HeadOrder order, double eps);
  // attention_decode (the slices, q/k norms, ropes and attention of a full-attention layer) as one op: in decode only.
  bool fuses_attention_decode(Phase phase) const { return phase == Phase::Decode && fuses("attention_decode"); }
  Tensor attention_decode(const Tensor& qg, const Tensor& k, const Tensor& v, const WeightRef& q_norm, const WeightRef& k_norm,
                          LayerState& st, int nq, int nkv, int rot_dims, double theta, int64_t pos0, double eps);
  // attention_prep (the slices, q/k norms and ropes of a full-attention layer) as one op: in prompt chunks only (a decode
  // token's are attention_decode's, or the parts: its three outputs could not be rerun by a replayed step).
  bool fuses_attention_prep(Phase phase) const { return phase == Phase::Prefill && fuses("attention_prep"); }
  struct AttentionPrep {
    Tensor q, gate, k;
  };
  AttentionPrep attention_prep(const Tensor& qg, const Tensor& k, const WeightRef& q_norm, const WeightRef& k_norm, int nq,
                               int rot_dims, double theta, int64_t pos0, double eps);
  // gdn_decode (gdn_prep, then gdn_output) as one op: in decode, on top of fused gdn_prep and gdn_output.
  bool fuses_gdn_decode(Phase phase) const { return fuses_gdn_output(phase) && fuses_gdn_prep() && fuses("gdn_decode"); }
  // parts > 0: the norm's 1 / rms left out (gdn_norm_parts), `sumsq` the heads' sums of squares over that many blocks.
  struct GdnDecode {
    Tensor y;
    std::optional<Tensor> sumsq;
  };
  GdnDecode gdn_decode(const Tensor& x, const Tensor& b, const Tensor& a, const Tensor& z, const WeightRef& conv,
                       const WeightRef& A, const WeightRef& dt_bias, const WeightRef& gain, LayerState& st, int nk, int dk,
                       double scale, double l2_eps, bool tiled, double eps, int parts = 0);
  // The Gated DeltaNet's output norm finished in front of its output projection w (heads of dv): in decode, on top of a
  // fused gdn_decode, where the plan picks an rms_scaled_matmul variant other than the reference that takes w; then
  // gdn_decode applies the gate and gives each head's sums of squares over this many column blocks (the profile's
  // decode.gdn_norm_parts, 1 where it does not divide dv), and rms_scaled_matmul applies the 1 / rms. 0: it does not
  // (also where decode.gdn_norm_parts is 0).
  int gdn_norm_parts(const WeightRef& w, int64_t dv, Phase phase) const;
  Tensor rms_scaled_matmul(const Tensor& x, const Tensor& sumsq, int parts, double eps, const WeightRef& w);
  // Decode prefetch (plan/prefetch.h): the raw rows of `ws` read by a dispatch placed beside the consumers of `after`,
  // so that the op reading `ws` next finds them in the last-level cache. In decode on a Vulkan device only, where the
  // profile's decode.prefetch is 1 (default 0: it lost on the H200, reports/nvidia-h200/decode-latency.md), and only weights
  // the decode kernels read as raw rows; not in validate mode.
  void prefetch(const Tensor& after, const std::vector<WeightRef>& ws, Phase phase);
  Routes moe_router(const Tensor& logits, int k);
  Tensor moe_experts(const Tensor& x, const Routes& r, const MoeWeights& w);
  Tensor shared_expert(const Tensor& x, const MoeWeights& w);

  // Runs one op through the plan's variant (and the reference too, in validate mode). rerun: how a live op
  // (OpDef::live) runs again in a replayed decode step; needed while capturing one.
  void run(const std::string& op, OpArgs& a, const DecodeGraph::Rerun& rerun = {});

  // Decode replay (Forward::capture_decode / replay_decode, replay.h). Needs a Vulkan device; not with validate
  // or profiling. Whether decode can be captured: every op the forward pass may run records its work into the device stream (a composite
  // op's reference variant counts as its parts, each checked on its own).
  bool can_capture() const;
  // owner: the forward pass whose states the step uses; a replay for another one is an error.
  void begin_capture(const void* owner);
  void end_capture(const Tensor& logits);  // runs the captured step; logits: the step's result
  bool has_capture() const { return graph_ && !graph_->capturing(); }
  void drop_capture() { graph_.reset(); }
  // The captured step at `pos`; its logits (the same tensor each step).
  Tensor replay_decode(int32_t token, int64_t pos, const void* owner);
  Tensor replay_decode(const Tensor& ids, int64_t pos, const void* owner);  // the token on the device (replay.h)

  const Usage& usage() const { return usage_; }
  std::string usage_report() const { return usage_.report(); }  // which kernel ran where; per-token fallbacks
  bool prefill_fallback() const { return usage_.prefill_fallback(); }
  std::string validation_report() const { return validation_.report(); }  // the per-op error table
  const std::map<std::string, OpErrorStats>& validation() const { return validation_.stats(); }

 private:
  bool capturing() const { return graph_ && graph_->capturing(); }
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
  Usage usage_;
  Validation validation_;
  Profiler profiler_;
  bool profiling_ = false;
  std::unique_ptr<DecodeGraph> graph_;
  int64_t context_ = 0;
  bool allow_nonfinite_ = false;
};

}  // namespace hl::gpu
