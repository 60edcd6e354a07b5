#include "ops/moe_experts/reference.h"

namespace hl::ref {

template <class S> Mat<S> expert_mlp(const Mat<S>& x, const ExpertMats<S>& e) {
  if (x.cols() != e.gate.cols() || e.up.rows() != e.gate.rows() || e.down.cols() != e.gate.rows())
    fail("expert_mlp: x [{}, {}] does not fit gate [{}, {}], up [{}, {}], down [{}, {}]", x.rows(), x.cols(),
         e.gate.rows(), e.gate.cols(), e.up.rows(), e.up.cols(), e.down.rows(), e.down.cols());
  Mat<S> g = x * e.gate.transpose();
  const Mat<S> u = x * e.up.transpose();
  g = g.unaryExpr([](S v) { return silu(v); }).cwiseProduct(u);
  return g * e.down.transpose();
}

template <class S>
Mat<S> moe_experts(const Mat<S>& x, const Routes<S>& routes, const std::vector<const ExpertMats<S>*>& experts) {
  const int64_t T = x.rows(), k = routes.expert.cols(), E = int64_t(experts.size());
  if (routes.expert.rows() != T || routes.weight.rows() != T || routes.weight.cols() != k)
    fail("moe_experts: routes [{}, {}] do not match {} tokens", routes.expert.rows(), k, T);
  // Group (token, slot) pairs by expert.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> rows(static_cast<size_t>(E));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t j = 0; j < k; ++j) {
      const int e = routes.expert(t, j);
      if (e < 0 || e >= E) fail("moe_experts: token {} routes to expert {} of {}", t, e, E);
      if (!experts[size_t(e)]) fail("moe_experts: expert {} is routed to but was not provided", e);
      rows[size_t(e)].push_back({t, j});
    }
  std::vector<Mat<S>> y(static_cast<size_t>(E));
#pragma omp parallel for schedule(dynamic)
  for (int64_t e = 0; e < E; ++e) {
    const auto& r = rows[size_t(e)];
    if (r.empty()) continue;
    Mat<S> xe(int64_t(r.size()), x.cols());
    for (size_t i = 0; i < r.size(); ++i) xe.row(int64_t(i)) = x.row(r[i].first);
    y[size_t(e)] = expert_mlp(xe, *experts[size_t(e)]);
  }
  Mat<S> out = Mat<S>::Zero(T, x.cols());
  for (int64_t e = 0; e < E; ++e)
    for (size_t i = 0; i < rows[size_t(e)].size(); ++i) {
      const auto [t, j] = rows[size_t(e)][i];
      out.row(t) += routes.weight(t, j) * y[size_t(e)].row(int64_t(i));
    }
  return out;
}

template Mat<float> expert_mlp(const Mat<float>&, const ExpertMats<float>&);
template Mat<double> expert_mlp(const Mat<double>&, const ExpertMats<double>&);
template Mat<float> moe_experts(const Mat<float>&, const Routes<float>&, const std::vector<const ExpertMats<float>*>&);
template Mat<double> moe_experts(const Mat<double>&, const Routes<double>&,
                                 const std::vector<const ExpertMats<double>*>&);

}  // namespace hl::ref
