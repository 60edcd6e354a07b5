#include "ops/ssm_conv/reference.h"

namespace hl::ref {

template <class S> Mat<S> ssm_conv(const Mat<S>& x, const Mat<S>& w, Mat<S>& state) {
  const int64_t T = x.rows(), C = x.cols(), K = w.cols();
  if (w.rows() != C || state.rows() != K - 1 || state.cols() != C)
    fail("ssm_conv: x [{}, {}], w [{}, {}], state [{}, {}] are inconsistent", T, C, w.rows(), K, state.rows(), state.cols());
  Mat<S> window(K - 1 + T, C);
  window << state, x;
  const Mat<S> wt = w.transpose();  // [K, C]: tap j as a row, so the inner loop runs over channels
  Mat<S> y = Mat<S>::Zero(T, C);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t j = 0; j < K; ++j) y.row(t).array() += wt.row(j).array() * window.row(t + j).array();
  state = window.bottomRows(K - 1);
  return y.unaryExpr([](S v) { return silu(v); });
}

template Mat<float> ssm_conv(const Mat<float>&, const Mat<float>&, Mat<float>&);
template Mat<double> ssm_conv(const Mat<double>&, const Mat<double>&, Mat<double>&);

}  // namespace hl::ref
