#include "ops/rmsnorm/reference.h"

namespace hl::ref {

template <class S> Mat<S> rmsnorm(const Mat<S>& x, const Vec<S>& gain, double eps) {
  const int64_t G = gain.size();
  if (G == 0 || x.cols() % G) fail("rmsnorm: {} columns are not a multiple of the gain length {}", x.cols(), G);
  Mat<S> y(x.rows(), x.cols());
  for (int64_t r = 0; r < x.rows(); ++r)
    for (int64_t g = 0; g < x.cols(); g += G) {
      auto xs = x.row(r).segment(g, G);
      S ss = xs.squaredNorm();
      if (!std::isfinite(ss) && xs.allFinite()) {
        // Finite activations whose squares overflow (|x| > ~1e19 in f32): normalise x / max|x| instead,
        // mean((x/m)^2) + eps/m^2 = (mean(x^2) + eps) / m^2. Other inputs keep the plain form bit for bit.
        const S m = xs.cwiseAbs().maxCoeff();
        const S inv = S(1) / std::sqrt((xs / m).squaredNorm() / S(G) + S(eps) / m / m);
        y.row(r).segment(g, G) = ((xs.array() / m) * inv) * gain.transpose().array();
        continue;
      }
      const S inv = S(1) / std::sqrt(ss / S(G) + S(eps));
      y.row(r).segment(g, G) = (xs.array() * inv) * gain.transpose().array();
    }
  return y;
}

template Mat<float> rmsnorm(const Mat<float>&, const Vec<float>&, double);
template Mat<double> rmsnorm(const Mat<double>&, const Vec<double>&, double);

}  // namespace hl::ref
