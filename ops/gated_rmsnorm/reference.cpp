#include "ops/gated_rmsnorm/reference.h"

#include "ops/rmsnorm/reference.h"

namespace hl::ref {

template <class S> Mat<S> gated_rmsnorm(const Mat<S>& o, const Mat<S>& z, const Vec<S>& gain, double eps) {
  if (o.rows() != z.rows() || o.cols() != z.cols())
    fail("gated_rmsnorm: o [{}, {}] and z [{}, {}] differ", o.rows(), o.cols(), z.rows(), z.cols());
  return rmsnorm(o, gain, eps).array() * z.unaryExpr([](S v) { return silu(v); }).array();
}

template Mat<float> gated_rmsnorm(const Mat<float>&, const Mat<float>&, const Vec<float>&, double);
template Mat<double> gated_rmsnorm(const Mat<double>&, const Mat<double>&, const Vec<double>&, double);

}  // namespace hl::ref
