#include "ops/rope/reference.h"

namespace hl::ref {

template <class S> Mat<S> rope(const Mat<S>& x, int head_dim, int rot_dims, double theta, int64_t pos0) {
  if (head_dim <= 0 || x.cols() % head_dim || rot_dims % 2 || rot_dims > head_dim)
    fail("rope: {} columns, head dim {}, rotary dims {} are inconsistent", x.cols(), head_dim, rot_dims);
  const int half = rot_dims / 2;
  Mat<S> y = x;
  Vec<S> c(half), s(half);
  for (int64_t t = 0; t < x.rows(); ++t) {
    for (int i = 0; i < half; ++i) {
      const double inv_freq = std::pow(theta, -2.0 * i / rot_dims);
      const double ang = double(pos0 + t) * inv_freq;
      c(i) = S(std::cos(ang));
      s(i) = S(std::sin(ang));
    }
    for (int64_t h = 0; h < x.cols(); h += head_dim)
      for (int i = 0; i < half; ++i) {
        const S a = x(t, h + i), b = x(t, h + i + half);
        y(t, h + i) = a * c(i) - b * s(i);
        y(t, h + i + half) = b * c(i) + a * s(i);
      }
  }
  return y;
}

template Mat<float> rope(const Mat<float>&, int, int, double, int64_t);
template Mat<double> rope(const Mat<double>&, int, int, double, int64_t);

}  // namespace hl::ref
