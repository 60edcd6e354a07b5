#include "ops/matmul/reference.h"

namespace hl::ref {

template <class S> Mat<S> matmul(const Mat<S>& x, const Mat<S>& w) {
  if (x.cols() != w.cols()) fail("matmul: input has {} columns but the weight expects {}", x.cols(), w.cols());
  Mat<S> y(x.rows(), w.rows());
  y.noalias() = x * w.transpose();
  return y;
}

template Mat<float> matmul(const Mat<float>&, const Mat<float>&);
template Mat<double> matmul(const Mat<double>&, const Mat<double>&);

}  // namespace hl::ref
