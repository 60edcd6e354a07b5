#include "ops/ssm_gates/reference.h"

namespace hl::ref {

template <class S> Gates<S> ssm_gates(const Mat<S>& b, const Mat<S>& a, const Vec<S>& A, const Vec<S>& dt_bias) {
  const int64_t nv = A.size();
  if (b.cols() != nv || a.cols() != nv || dt_bias.size() != nv || a.rows() != b.rows())
    fail("ssm_gates: b [{}, {}], a [{}, {}], A [{}], dt_bias [{}] are inconsistent", b.rows(), b.cols(), a.rows(),
         a.cols(), nv, dt_bias.size());
  Gates<S> out{b.unaryExpr([](S x) { return sigmoid(x); }), Mat<S>(a.rows(), nv)};
  for (int64_t t = 0; t < a.rows(); ++t)
    for (int64_t h = 0; h < nv; ++h) out.g(t, h) = A(h) * softplus(a(t, h) + dt_bias(h));
  return out;
}

template Gates<float> ssm_gates(const Mat<float>&, const Mat<float>&, const Vec<float>&, const Vec<float>&);
template Gates<double> ssm_gates(const Mat<double>&, const Mat<double>&, const Vec<double>&, const Vec<double>&);

}  // namespace hl::ref
