#include "ops/rmsnorm.h"

namespace hl::ref {

template <class S> Mat<S> rmsnorm(const Mat<S>& x, const Vec<S>& gain, double eps) {
  const int64_t G = gain.size();
  if (G == 0 || x.cols() % G) fail("rmsnorm: {} columns are not a multiple of the gain length {}", x.cols(), G);
  Mat<S> y(x.rows(), x.cols());
  for (int64_t r = 0; r < x.rows(); ++r)
    for (int64_t g = 0; g < x.cols(); g += G) {
      auto xs = x.row(r).segment(g, G);
      const S inv = S(1) / std::sqrt(xs.squaredNorm() / S(G) + S(eps));
      y.row(r).segment(g, G) = (xs.array() * inv) * gain.transpose().array();
    }
  return y;
}

template Mat<float> rmsnorm(const Mat<float>&, const Vec<float>&, double);
template Mat<double> rmsnorm(const Mat<double>&, const Vec<double>&, double);

}  // namespace hl::ref
