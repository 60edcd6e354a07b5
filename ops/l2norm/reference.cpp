#include "ops/l2norm/reference.h"

namespace hl::ref {

template <class S> Mat<S> l2norm(const Mat<S>& x, int d, S scale, double eps) {
  if (d <= 0 || x.cols() % d) fail("l2norm: {} columns are not a multiple of the head dim {}", x.cols(), d);
  Mat<S> y(x.rows(), x.cols());
  for (int64_t r = 0; r < x.rows(); ++r)
    for (int64_t g = 0; g < x.cols(); g += d) {
      auto xs = x.row(r).segment(g, d);
      const S ss = xs.squaredNorm();
      if (!std::isfinite(ss) && xs.allFinite()) {  // squares overflow: normalise x / max|x| (as rmsnorm does)
        const S m = xs.cwiseAbs().maxCoeff();
        y.row(r).segment(g, d) = (xs / m) * (scale / std::sqrt((xs / m).squaredNorm() + S(eps) / m / m));
        continue;
      }
      y.row(r).segment(g, d) = xs * (scale / std::sqrt(ss + S(eps)));
    }
  return y;
}

template Mat<float> l2norm(const Mat<float>&, int, float, double);
template Mat<double> l2norm(const Mat<double>&, int, double, double);

}  // namespace hl::ref
