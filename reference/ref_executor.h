// The reference executor: runs every op of the forward pass with the Eigen oracle in precision S
// (float or double). The forward pass (model/forward.h) is written once against an executor's op
// methods; this one is the oracle, the Vulkan/plan executor is the playground.
#pragma once
#include "model/config.h"
#include "model/weight_cache.h"
#include "model/weights.h"
#include "ops/attention/reference.h"
#include "ops/embed/reference.h"
#include "ops/gated_rmsnorm/reference.h"
#include "ops/l2norm/reference.h"
#include "ops/matmul/reference.h"
#include "ops/moe_experts/reference.h"
#include "ops/rmsnorm/reference.h"
#include "ops/rope/reference.h"
#include "ops/shared_expert/reference.h"
#include "ops/slice/reference.h"
#include "ops/ssm_conv/reference.h"
#include "ops/ssm_gates/reference.h"
#include "ops/ssm_scan/reference.h"

namespace hl {

enum class ScanForm { Chunked, Recurrent };

struct ScanOptions {
  ScanForm prefill_form = ScanForm::Chunked;  // decode always steps the recurrence
  int chunk = 64;
};

template <class S> class RefExecutor {
 public:
  using Scalar = S;
  using Tensor = Mat<S>;
  using Routes = ref::Routes<S>;
  using Gates = ref::Gates<S>;
  struct LayerState {
    ref::KvCache<S> kv;  // full-attention layers
    Mat<S> conv;         // [K-1, conv_dim], GDN layers
    Mat<S> ssm;          // [n_v, d_k * d_v], GDN layers
  };

  // allow_nonfinite: let NaN/Inf outputs flow on (experiments); by default the first op that produces one stops the
  // run with a one-line error naming the op and the layer (finite() below).
  explicit RefExecutor(ScanOptions scan = {}, bool allow_nonfinite = false) : scan_(scan), allow_nonfinite_(allow_nonfinite) {}

  LayerState init_state(const ModelConfig& c, LayerKind kind) const {
    LayerState s;
    if (kind == LayerKind::LinearAttention) {
      s.conv = Mat<S>::Zero(c.conv_kernel - 1, c.conv_dim());
      s.ssm = Mat<S>::Zero(c.lin_v_heads, int64_t(c.lin_k_dim) * c.lin_v_dim);
    }
    return s;
  }

  Mat<float> to_host(const Tensor& t) const { return t.template cast<float>(); }
  void begin_step(Phase) { layer_ = -1; }
  void begin_layer(int layer, LayerKind kind) { layer_ = layer, kind_ = kind; }

  Tensor embed(const WeightRef& table, const std::vector<int32_t>& tokens) {
    return finite("embed", ref::embed<S>(table, tokens));
  }
  Tensor rmsnorm(const Tensor& x, const WeightRef& gain, double eps) { return finite("rmsnorm", ref::rmsnorm(x, vec(gain), eps)); }
  Tensor matmul(const Tensor& x, const WeightRef& w) { return finite("matmul", ref::matmul(x, mat(w))); }
  Tensor lm_head(const Tensor& x, const WeightRef& w) { return finite("lm_head", ref::matmul(x, mat(w))); }
  Tensor add(const Tensor& a, const Tensor& b) { return finite("add", a + b); }
  Tensor last_row(const Tensor& x) { return x.bottomRows(1); }
  Tensor slice(const Tensor& x, int64_t period, int64_t offset, int64_t width) {
    return ref::slice(x, period, offset, width);  // a copy of values already checked
  }
  Tensor rope(const Tensor& x, int head_dim, int rot_dims, double theta, int64_t pos0) {
    return finite("rope", ref::rope(x, head_dim, rot_dims, theta, pos0));
  }
  Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& gate, LayerState& st, int nq,
                   int nkv) {
    return finite("attention", ref::attention(q, k, v, gate, st.kv, nq, nkv));
  }
  Tensor ssm_conv(const Tensor& x, const WeightRef& w, LayerState& st) {
    return finite("ssm_conv", ref::ssm_conv(x, mat(w), st.conv));
  }
  Tensor l2norm(const Tensor& x, int d, double scale, double eps) { return finite("l2norm", ref::l2norm(x, d, S(scale), eps)); }
  Gates ssm_gates(const Tensor& b, const Tensor& a, const WeightRef& A, const WeightRef& dt_bias) {
    Gates g = ref::ssm_gates(b, a, vec(A), vec(dt_bias));
    check_finite("ssm_gates", g.beta, "beta");
    check_finite("ssm_gates", g.g, "g");
    return g;
  }
  Tensor ssm_scan(const Tensor& q, const Tensor& k, const Tensor& v, const Gates& gt, LayerState& st, int nk,
                  Phase phase, ref::HeadOrder order) {
    if (phase == Phase::Decode || scan_.prefill_form == ScanForm::Recurrent)
      return finite("ssm_scan", ref::ssm_scan_recurrent(q, k, v, gt.beta, gt.g, st.ssm, nk, order));
    return finite("ssm_scan", ref::ssm_scan_chunked(q, k, v, gt.beta, gt.g, st.ssm, nk, scan_.chunk, order));
  }
  Tensor gated_rmsnorm(const Tensor& o, const Tensor& z, const WeightRef& gain, double eps) {
    return finite("gated_rmsnorm", ref::gated_rmsnorm(o, z, vec(gain), eps));
  }
  Routes moe_router(const Tensor& logits, int k) {
    Routes r = ref::moe_router(logits, k);
    check_finite("moe_router", r.weight, "weight");
    return r;
  }
  Tensor moe_experts(const Tensor& x, const Routes& r, const MoeWeights& w) {
    // Only the experts some token routes to are materialised.
    std::vector<std::shared_ptr<const ref::ExpertMats<S>>> hold(size_t(w.n_experts));
    std::vector<const ref::ExpertMats<S>*> ptrs(size_t(w.n_experts), nullptr);
    for (int64_t i = 0; i < r.expert.size(); ++i) {
      const int e = r.expert.data()[i];
      if (e >= 0 && e < w.n_experts && !hold[size_t(e)]) ptrs[size_t(e)] = (hold[size_t(e)] = expert(w.expert(e))).get();
    }
    return finite("moe_experts", ref::moe_experts(x, r, ptrs));
  }
  Tensor shared_expert(const Tensor& x, const MoeWeights& w) {
    return finite("shared_expert", ref::shared_expert(x, *expert(w.shared), vec(w.shared_gate)));
  }

  // The first op whose output holds a NaN or an Inf ends the run with a one-line error naming it and its layer (a
  // NaN weight would otherwise turn every logit into NaN with exit status 0). Checked where the value is made:
  // one pass over each output, small beside the op itself.
  Tensor finite(const char* op, Tensor y) const {
    check_finite(op, y);
    return y;
  }
  void check_finite(const char* op, const Tensor& y, const char* output = nullptr) const {
    if (allow_nonfinite_ || y.allFinite()) return;
    const int64_t bad = y.size() - y.array().isFinite().count();
    int64_t at = 0;
    while (std::isfinite(double(y.data()[at]))) ++at;
    const std::string where = layer_ < 0 ? "model level" : fmt::format("layer {} ({})", layer_,
        kind_ == LayerKind::FullAttention ? "full-attention" : "gated-deltanet");
    fail("non-finite values: op {} at {} produced {} NaN/Inf of {} values{} (first at row {}, column {}); "
         "--allow-nonfinite lets them through", op, where, bad, y.size(), output ? fmt::format(" in '{}'", output) : "",
         at / y.cols(), at % y.cols());
  }

  // Materialised weights in precision S, cached (model/weight_cache.h).
  std::shared_ptr<const Mat<S>> mat_ptr(const WeightRef& w) {
    return mats_.get(w, size_t(w.numel()) * sizeof(S), [&] { return w.to_mat<S>(); });
  }
  const Mat<S>& mat(const WeightRef& w) { return *(held_ = mat_ptr(w)); }
  Vec<S> vec(const WeightRef& w) { return w.to_vec<S>(); }
  std::shared_ptr<const ref::ExpertMats<S>> expert(const ExpertWeights& e) {
    return experts_.get(e.gate, size_t(e.gate.numel() * 3) * sizeof(S),
                        [&] { return ref::ExpertMats<S>{e.gate.to_mat<S>(), e.up.to_mat<S>(), e.down.to_mat<S>()}; });
  }

 private:
  ScanOptions scan_;
  bool allow_nonfinite_ = false;
  int layer_ = -1;
  LayerKind kind_ = LayerKind::LinearAttention;
  WeightCache<Mat<S>> mats_;
  WeightCache<ref::ExpertMats<S>> experts_;
  std::shared_ptr<const Mat<S>> held_;  // keeps the last mat() alive for the op that asked for it
};

}  // namespace hl
