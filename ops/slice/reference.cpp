#include "ops/slice/reference.h"

namespace hl::ref {

template <class S> Mat<S> slice(const Mat<S>& x, int64_t period, int64_t offset, int64_t width) {
  if (period <= 0 || x.cols() % period || offset < 0 || width < 0 || offset + width > period)
    fail("slice: columns [{}, {}) of blocks of {} do not fit {} columns", offset, offset + width, period, x.cols());
  const int64_t n = x.cols() / period;
  Mat<S> y(x.rows(), n * width);
  for (int64_t b = 0; b < n; ++b) y.middleCols(b * width, width) = x.middleCols(b * period + offset, width);
  return y;
}

template Mat<float> slice(const Mat<float>&, int64_t, int64_t, int64_t);
template Mat<double> slice(const Mat<double>&, int64_t, int64_t, int64_t);

}  // namespace hl::ref
