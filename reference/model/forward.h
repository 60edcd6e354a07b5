// The forward pass of the Qwen3.6 hybrid model (SPEC 4), written once against an executor's ops: the
// reference executor makes it the oracle; a plan executor swaps any op for a GPU variant. It carries
// the per-layer state (KV cache, conv window, recurrent state) between prompt chunks and decode steps.
#pragma once
#include <array>
#include <cmath>
#include <functional>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "model/weights.h"
#include "ops/ssm_scan/reference.h"

namespace hl {

template <class Ex> class Forward {
 public:
  using Tensor = typename Ex::Tensor;
  // Called with (index, hidden): 0 = embedding output, i + 1 = output of layer i, n_layers + 1 = after the
  // final norm (transformers' output_hidden_states convention).
  using Observer = std::function<void(int, const Tensor&)>;

  Forward(Ex& ex, const ModelWeights& w) : ex_(ex), w_(w), c_(w.cfg) {
    for (int i = 0; i < c_.n_layers; ++i) state_.push_back(ex_.init_state(c_, c_.layer_kinds[size_t(i)]));
  }

  void set_observer(Observer o) { observe_ = std::move(o); }
  Ex& executor() { return ex_; }
  int64_t position() const { return pos_; }

  // Which rows of logits a step returns: every position's, or only the last one's (a prompt chunk whose
  // logits only seed the next token, as llama-bench's pp tests do: the lm_head then runs as a mat-vec).
  enum class Logits { All, Last };

  // Feeds tokens at positions [position(), position() + T) and returns their logits [T, vocab] ([1, vocab]
  // with Logits::Last). Phase::Decode takes exactly one token and steps the recurrences instead of the chunked forms.
  Tensor step(const std::vector<int32_t>& tokens, Phase phase, Logits rows = Logits::All) {
    if (tokens.empty()) fail("forward: empty token chunk");
    if (phase == Phase::Decode && tokens.size() != 1) fail("forward: decode takes one token, got {}", tokens.size());
    ex_.begin_step(phase);
    Stream s{ex_.embed(w_.embed, tokens), {}, std::nullopt};
    notify(0, s.x);
    // Each residual add is followed by a norm (the post-attention norm, the next layer's input norm, the final
    // norm): add_norm runs the pair as one op where the executor can, or the op that reads the norm folds them in.
    for (int i = 0; i < c_.n_layers; ++i) {
      const LayerWeights& L = w_.layers[size_t(i)];
      ex_.begin_layer(i, L.kind);
      if (i == 0) s.h = ex_.rmsnorm(s.x, L.input_norm, c_.rms_eps);
      const Projection a = L.kind == LayerKind::FullAttention
                               ? attention_block(L.attn, state_[size_t(i)], s, L.input_norm, L.moe, phase)
                               : deltanet_block(L.gdn, state_[size_t(i)], s, L.input_norm, L.moe, phase);
      project_add_norm(s, a, L.post_norm, L.moe, phase);
      const bool last = i + 1 == c_.n_layers;
      if (!last) prefetch(newest(s), projection_weights(w_.layers[size_t(i) + 1]), phase);  // beside the MoE block's start
      const WeightRef& next_norm = last ? w_.final_norm : w_.layers[size_t(i) + 1].input_norm;
      moe_add_norm(L.moe, s, L.post_norm, next_norm, last ? nullptr : &w_.layers[size_t(i) + 1], phase);
      if (observe_) normed(s, next_norm);  // the observer sees the stream with every add done
      notify(i + 1, s.x);
    }
    ex_.begin_layer(-1, LayerKind::LinearAttention);
    Tensor h = c_.n_layers == 0 ? ex_.rmsnorm(s.x, w_.final_norm, c_.rms_eps) : normed(s, w_.final_norm);
    notify(c_.n_layers + 1, h);
    pos_ += int64_t(tokens.size());
    // Norms are per row, so the last row of the normed stream is the norm of the last row.
    if (rows == Logits::Last && tokens.size() > 1) h = ex_.last_row(h);
    return ex_.lm_head(h, w_.lm_head);
  }

  // Decode by replay, for an executor that can capture (the plan executor): capture_decode runs a decode step
  // while recording it; replay_decode(token) runs the recorded step again at the next position (bit-identical
  // to step() there: the same kernels on the same buffers, with the token, position and KV length refreshed).
  Tensor capture_decode(int32_t token) {
    ex_.begin_capture(this);
    Tensor l = step({token}, Phase::Decode);
    ex_.end_capture(l);
    return l;
  }
  Tensor replay_decode(int32_t token) {
    Tensor l = ex_.replay_decode(token, pos_, this);
    pos_ += 1;
    return l;
  }
  // The token read on the device (ids: an i32 [1, 1] device tensor, e.g. the step before's argmax): the host need not
  // wait for the step before.
  Tensor replay_decode(const Tensor& ids) {
    Tensor l = ex_.replay_decode(ids, pos_, this);
    pos_ += 1;
    return l;
  }

 private:
  using State = typename Ex::LayerState;

  // A block's output before its output projection: the projection's input and weight (project_add_norm applies it), and
  // where the executor leaves the Gated DeltaNet's output norm's 1 / rms to that projection, the heads' sums of squares
  // in `parts` blocks each (`in` is then the gated output, o * gain * silu(z)).
  struct HeadSums {
    Tensor sumsq;
    int parts;
  };
  struct Projection {
    Tensor in;
    const WeightRef* w;
    std::optional<HeadSums> rms = std::nullopt;
  };

  // The residual stream between a layer's parts: x, and either h, the norm of x that the next part reads, or `a`, an addend
  // whose add and norm the next part folds in front of itself (where the executor defers them: defers_add_rmsnorm).
  struct Stream {
    Tensor x, h;
    std::optional<Tensor> a;
  };

  // s.h, the norm of the stream with `gain`: the deferred add and norm run first where one is pending.
  const Tensor& normed(Stream& s, const WeightRef& gain) {
    if (s.a) {
      std::tie(s.x, s.h) = add_norm(s.x, *s.a, gain);
      s.a.reset();
    }
    return s.h;
  }

  // The newest tensor of the stream: the one its next part reads first.
  static const Tensor& newest(const Stream& s) { return s.a ? *s.a : s.h; }

  // A layer's input projections, as projections() takes them.
  static std::vector<WeightRef> projection_weights(const LayerWeights& L) {
    return L.kind == LayerKind::FullAttention ? std::vector<WeightRef>{L.attn.q, L.attn.k, L.attn.v}
                                              : std::vector<WeightRef>{L.gdn.qkv, L.gdn.b, L.gdn.a, L.gdn.z};
  }

  // What a layer reads after its mixer: the output projection `out` and the MoE block's weights read before its routes
  // are known (router, shared expert).
  static std::vector<WeightRef> tail_weights(const WeightRef& out, const MoeWeights& m) {
    return {out, m.router, m.shared_gate, m.shared.gate, m.shared.up, m.shared.down};
  }

  // A hint that `ws` are read soon after the consumers of `after`: an executor that can warm the device's cache with
  // them beside those consumers (the plan executor in decode: plan/prefetch.h) does; the others have nothing to do.
  void prefetch(const Tensor& after, const std::vector<WeightRef>& ws, Phase phase) {
    if constexpr (requires { ex_.prefetch(after, ws, phase); }) ex_.prefetch(after, ws, phase);
  }

  // SPEC 4.5: gated softmax attention. The layer's tail weights are prefetched beside its projections (its attention is
  // recorded afresh each replayed step, apart from the rest).
  Projection attention_block(const AttentionWeights& w, State& st, Stream& s, const WeightRef& norm, const MoeWeights& moe,
                             Phase phase) {
    const int D = c_.head_dim;
    prefetch(newest(s), tail_weights(w.o, moe), phase);
    const auto [qg, k0, v] = projections<3>(s, norm, {w.q, w.k, w.v}, phase);  // qg per head: D query columns, then D gate columns
    // An executor that runs the slices, norms, ropes and attention of a decode token as one op (the plan executor, when its
    // plan picks an attention_decode variant) does.
    if constexpr (requires { ex_.fuses_attention_decode(phase); })
      if (ex_.fuses_attention_decode(phase))
        return {ex_.attention_decode(qg, k0, v, w.q_norm, w.k_norm, st, c_.n_q_heads, c_.n_kv_heads, c_.rope_dims, c_.rope_theta,
                                     pos_, c_.rms_eps),
                &w.o};
    // An executor that runs a prompt chunk's slices, norms and ropes as one op (the plan executor, when its plan picks an
    // attention_prep variant) does.
    if constexpr (requires { ex_.fuses_attention_prep(phase); })
      if (ex_.fuses_attention_prep(phase)) {
        const auto p = ex_.attention_prep(qg, k0, w.q_norm, w.k_norm, c_.n_q_heads, c_.rope_dims, c_.rope_theta, pos_, c_.rms_eps);
        return {ex_.attention(p.q, p.k, v, p.gate, st, c_.n_q_heads, c_.n_kv_heads), &w.o};
      }
    Tensor q = ex_.slice(qg, 2 * D, 0, D);
    const Tensor gate = ex_.slice(qg, 2 * D, D, D);
    Tensor k = k0;
    q = ex_.rope(ex_.rmsnorm(q, w.q_norm, c_.rms_eps), D, c_.rope_dims, c_.rope_theta, pos_);
    k = ex_.rope(ex_.rmsnorm(k, w.k_norm, c_.rms_eps), D, c_.rope_dims, c_.rope_theta, pos_);
    return {ex_.attention(q, k, v, gate, st, c_.n_q_heads, c_.n_kv_heads), &w.o};
  }

  // SPEC 4.4: Gated DeltaNet. The layer's tail weights are prefetched beside its recurrence (a few workgroups).
  Projection deltanet_block(const DeltaNetWeights& w, State& st, Stream& s, const WeightRef& norm, const MoeWeights& moe,
                            Phase phase) {
    const auto [qkv, b, a, z] = projections<4>(s, norm, {w.qkv, w.b, w.a, w.z}, phase);
    prefetch(qkv, tail_weights(w.out, moe), phase);
    // An executor that runs a decode token's preparation and output stages as one op (the plan executor, when its plan
    // picks a gdn_decode variant on top of fused gdn_prep and gdn_output) does.
    // Where the executor leaves the norm's 1 / rms to the output projection (gdn_norm_parts), the step applies the gate
    // and gives the heads' sums of squares, and the projection the 1 / rms (rms_scaled_matmul).
    if constexpr (requires { ex_.fuses_gdn_decode(phase); })
      if (ex_.fuses_gdn_decode(phase)) {
        const int parts = ex_.gdn_norm_parts(w.out, c_.lin_v_dim, phase);
        auto r = ex_.gdn_decode(qkv, b, a, z, w.conv, w.A, w.dt_bias, w.norm, st, c_.lin_k_heads, c_.lin_k_dim,
                                1.0 / std::sqrt(double(c_.lin_k_dim)), 1e-6, w_.v_heads_tiled, c_.rms_eps, parts);
        if (r.sumsq) return {std::move(r.y), &w.out, HeadSums{std::move(*r.sumsq), parts}};
        return {std::move(r.y), &w.out};
      }
    const Prepped p = gdn_prep(w, st, qkv, b, a);
    return {gdn_output(w, st, p, z, phase), &w.out};
  }

  // The projections of the stream's norm with gain `norm`, h w_i^T: with a deferred add, the add and norm folded in front of
  // them where the executor can (the plan executor in decode, when its plan picks an add_rmsnorm_matmul_group variant that
  // takes the weights); else as one op where the executor fuses them (the plan executor in decode, when its plan picks
  // a matmul_group variant), else a matmul each.
  template <size_t N>
  std::array<Tensor, N> projections(Stream& s, const WeightRef& norm, const std::array<WeightRef, N>& ws, Phase phase) {
    if constexpr (requires { ex_.fuses_add_rmsnorm_matmul_group(std::vector<WeightRef>{}, phase); }) {
      const std::vector<WeightRef> v(ws.begin(), ws.end());
      if (s.a && ex_.fuses_add_rmsnorm_matmul_group(v, phase)) {
        auto r = ex_.add_rmsnorm_matmul_group(s.x, *s.a, norm, c_.rms_eps, v);
        s.x = std::move(r.sum);
        s.a.reset();
        std::array<Tensor, N> y;
        for (size_t i = 0; i < N; ++i) y[i] = std::move(r.ys[i]);
        return y;
      }
    }
    return projections(normed(s, norm), ws, phase);
  }
  template <size_t N> std::array<Tensor, N> projections(const Tensor& h, const std::array<WeightRef, N>& ws, Phase phase) {
    std::array<Tensor, N> y;
    if constexpr (requires { ex_.fuses_matmul_group(std::vector<WeightRef>{}, phase); }) {
      const std::vector<WeightRef> v(ws.begin(), ws.end());
      if (ex_.fuses_matmul_group(v, phase)) {
        auto r = ex_.matmul_group(h, v);
        for (size_t i = 0; i < N; ++i) y[i] = std::move(r[i]);
        return y;
      }
    }
    for (size_t i = 0; i < N; ++i) y[i] = ex_.matmul(h, ws[i]);
    return y;
  }

  // SPEC 4.4's scan and its gated norm: one op where the executor fuses them (the plan executor in decode, when its plan
  // picks a gdn_output variant), else the two.
  Tensor gdn_output(const DeltaNetWeights& w, State& st, const auto& p, const Tensor& z, Phase phase) {
    const auto order = w_.v_heads_tiled ? ref::HeadOrder::Tiled : ref::HeadOrder::Grouped;
    if constexpr (requires { ex_.fuses_gdn_output(phase); })
      if (ex_.fuses_gdn_output(phase)) return ex_.gdn_output(p.q, p.k, p.v, p.gates, z, w.norm, st, c_.lin_k_heads, order, c_.rms_eps);
    return ex_.gated_rmsnorm(ex_.ssm_scan(p.q, p.k, p.v, p.gates, st, c_.lin_k_heads, phase, order), z, w.norm, c_.rms_eps);
  }

  // SPEC 4.4 steps 2-6, from the projections x = q | k | v, b, a to the scan's inputs: conv with the
  // carried state, silu, split, L2 norms (q scaled by 1/sqrt(d_k)), gates. An executor that can run them
  // as one op (the plan executor, when its plan picks a gdn_prep variant) does; otherwise the separate ops.
  struct Prepped {
    Tensor q, k, v;
    typename Ex::Gates gates;
  };
  Prepped gdn_prep(const DeltaNetWeights& w, State& st, const Tensor& x, const Tensor& b, const Tensor& a) {
    const double scale = 1.0 / std::sqrt(double(c_.lin_k_dim)), eps = 1e-6;
    if constexpr (requires { ex_.fuses_gdn_prep(); })
      if (ex_.fuses_gdn_prep()) {
        auto r = ex_.gdn_prep(x, b, a, w.conv, w.A, w.dt_bias, st, c_.lin_k_heads, c_.lin_k_dim, scale, eps);
        return {r.q, r.k, r.v, r.gates};
      }
    const int64_t kd = c_.key_dim(), vd = c_.value_dim(), cd = c_.conv_dim();
    const Tensor u = ex_.ssm_conv(x, w.conv, st);  // silu(conv), q | k | v
    return {ex_.l2norm(ex_.slice(u, cd, 0, kd), c_.lin_k_dim, scale, eps), ex_.l2norm(ex_.slice(u, cd, kd, kd), c_.lin_k_dim, 1.0, eps),
            ex_.slice(u, cd, 2 * kd, vd), ex_.ssm_gates(b, a, w.A, w.dt_bias)};
  }

  // SPEC 4.6: routed experts and the gated shared expert, whose sum is the block's output (added by add_norm). An
  // executor that runs the whole block as one op (the plan executor in decode, when its plan picks a moe_block
  // variant) returns that sum as the routed part and no shared part.
  std::pair<Tensor, std::optional<Tensor>> moe_block(const MoeWeights& w, const Tensor& h, Phase phase) {
    if constexpr (requires { ex_.fuses_moe_block(w, phase); })
      if (ex_.fuses_moe_block(w, phase)) return {ex_.moe_block(h, w, c_.top_k), std::nullopt};
    const auto routes = ex_.moe_router(ex_.matmul(h, w.router), c_.top_k);
    return {ex_.moe_experts(h, routes, w), ex_.shared_expert(h, w)};
  }

  // The stream plus the output projection a.in a.w^T, and its rmsnorm with gain: the add and norm left to the MoE block
  // where the executor folds them in front of it (the plan executor in decode, when its plan picks an
  // add_rmsnorm_moe_block variant that takes the block's weights); else the projection, then add_norm.
  void project_add_norm(Stream& s, const Projection& a, const WeightRef& gain, const MoeWeights& moe, Phase phase) {
    if constexpr (requires { ex_.fuses_add_rmsnorm_moe_block(moe, phase); })
      if (ex_.fuses_add_rmsnorm_moe_block(moe, phase)) {
        s.a = project(a);
        return;
      }
    std::tie(s.x, s.h) = add_norm(s.x, project(a), gain);
  }

  // a.in a.w^T, with the heads' 1 / rms in front where the block left it to the projection.
  Tensor project(const Projection& a) {
    if constexpr (requires { ex_.rms_scaled_matmul(a.in, a.in, 1, 1.0, *a.w); })
      if (a.rms) return ex_.rms_scaled_matmul(a.in, a.rms->sumsq, a.rms->parts, c_.rms_eps, *a.w);
    return ex_.matmul(a.in, *a.w);
  }

  // Whether the add and norm after this MoE block are left to the next layer's projections (next: that layer, or none
  // after the last one, whose final norm feeds the lm_head).
  bool defers_to(const LayerWeights* next, Phase phase) {
    if constexpr (requires { ex_.fuses_add_rmsnorm_matmul_group(std::vector<WeightRef>{}, phase); }) {
      return next && ex_.fuses_add_rmsnorm_matmul_group(projection_weights(*next), phase);
    }
    return false;
  }

  // The MoE block of the stream's norm with post_norm: with the add and norm before it deferred (project_add_norm), the
  // block folds them in front of itself (add_rmsnorm_moe_block); else moe_block on the norm.
  std::pair<Tensor, std::optional<Tensor>> moe_block_in(const MoeWeights& w, Stream& s, const WeightRef& post_norm, Phase phase) {
    if constexpr (requires { ex_.fuses_add_rmsnorm_moe_block(w, phase); })
      if (s.a && ex_.fuses_add_rmsnorm_moe_block(w, phase)) {
        auto r = ex_.add_rmsnorm_moe_block(s.x, *s.a, post_norm, c_.rms_eps, w, c_.top_k);
        s.x = std::move(r.sum);
        s.a.reset();
        return {std::move(r.y), std::nullopt};
      }
    return moe_block(w, normed(s, post_norm), phase);
  }

  // The MoE block (moe_block_in) added to the stream, and its rmsnorm with gain (the next layer's input norm or, after the
  // last layer, the final norm: its ops count as model-level): deferred where the next layer's projections fold them in
  // (defers_to), else add_norm.
  void moe_add_norm(const MoeWeights& w, Stream& s, const WeightRef& post_norm, const WeightRef& gain, const LayerWeights* next,
                    Phase phase) {
    auto [routed, shared] = moe_block_in(w, s, post_norm, phase);
    if (!next) ex_.begin_layer(-1, LayerKind::LinearAttention);  // -1: model-level ops (the final norm)
    if (!shared && defers_to(next, phase)) {
      s.a = std::move(routed);
      return;
    }
    std::tie(s.x, s.h) = add_norm(s.x, routed, gain, shared ? &*shared : nullptr);
  }

  // x + a (x + (a + b) with a second addend b) and its rmsnorm with gain: one op where the executor fuses them
  // (the plan executor when its plan picks an add_rmsnorm variant), else the adds, then the norm.
  std::pair<Tensor, Tensor> add_norm(const Tensor& x, const Tensor& a, const WeightRef& gain, const Tensor* b = nullptr) {
    if constexpr (requires { ex_.fuses_add_rmsnorm(); })
      if (ex_.fuses_add_rmsnorm()) {
        auto r = ex_.add_rmsnorm(x, a, gain, c_.rms_eps, b);
        return {r.sum, r.normed};
      }
    Tensor y = ex_.add(x, b ? ex_.add(a, *b) : a);
    Tensor n = ex_.rmsnorm(y, gain, c_.rms_eps);
    return {std::move(y), std::move(n)};
  }

  void notify(int i, const Tensor& x) {
    if (observe_) observe_(i, x);
  }

  Ex& ex_;
  const ModelWeights& w_;
  const ModelConfig& c_;
  std::vector<State> state_;
  int64_t pos_ = 0;
  Observer observe_;
};

}  // namespace hl
