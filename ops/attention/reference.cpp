#include "ops/attention/reference.h"

namespace hl::ref {

template <class S>
Mat<S> attention(const Mat<S>& q, const Mat<S>& k, const Mat<S>& v, const Mat<S>& gate, KvCache<S>& cache,
                 int n_q_heads, int n_kv_heads) {
  const int64_t T = q.rows(), D = q.cols() / n_q_heads;
  if (q.cols() != n_q_heads * D || k.cols() != n_kv_heads * D || v.cols() != k.cols() || gate.cols() != q.cols() ||
      k.rows() != T || v.rows() != T || gate.rows() != T || n_q_heads % n_kv_heads)
    fail("attention: shapes q [{}, {}], k [{}, {}], v [{}, {}], gate [{}, {}] do not fit {} q / {} kv heads", q.rows(),
         q.cols(), k.rows(), k.cols(), v.rows(), v.cols(), gate.rows(), gate.cols(), n_q_heads, n_kv_heads);
  if (cache.len() > 0 && cache.k.cols() != k.cols()) fail("attention: KV cache width differs from the new keys");

  const int64_t past = cache.len(), L = past + T;
  cache.k.conservativeResize(L, k.cols());
  cache.v.conservativeResize(L, v.cols());
  cache.k.bottomRows(T) = k;
  cache.v.bottomRows(T) = v;

  const int group = n_q_heads / n_kv_heads;
  const S scale = S(1) / std::sqrt(S(D));
  Mat<S> o(T, q.cols());
#pragma omp parallel for schedule(dynamic)
  for (int n = 0; n < n_q_heads; ++n) {
    const int64_t m = n / group;
    Mat<S> s = (q.middleCols(n * D, D) * cache.k.middleCols(m * D, D).transpose()) * scale;  // [T, L]
    for (int64_t t = 0; t < T; ++t) {
      const int64_t visible = past + t + 1;
      auto row = s.row(t).head(visible);
      const S mx = row.maxCoeff();
      row = (row.array() - mx).exp();
      row /= row.sum();
      s.row(t).tail(L - visible).setZero();
    }
    o.middleCols(n * D, D).noalias() = s * cache.v.middleCols(m * D, D);
  }
  return o.array() * gate.array().unaryExpr([](S g) { return sigmoid(g); });
}

template Mat<float> attention(const Mat<float>&, const Mat<float>&, const Mat<float>&, const Mat<float>&,
                              KvCache<float>&, int, int);
template Mat<double> attention(const Mat<double>&, const Mat<double>&, const Mat<double>&, const Mat<double>&,
                               KvCache<double>&, int, int);

}  // namespace hl::ref
