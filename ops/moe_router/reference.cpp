#include "ops/moe_router/reference.h"

#include <algorithm>
#include <numeric>

namespace hl::ref {

template <class S> Routes<S> moe_router(const Mat<S>& logits, int k) {
  const int64_t T = logits.rows(), E = logits.cols();
  if (k <= 0 || k > E) fail("moe_router: top-{} of {} experts", k, E);
  Routes<S> r{IMat(T, k), Mat<S>(T, k)};
  std::vector<int> idx(size_t(E), 0);
  for (int64_t t = 0; t < T; ++t) {
    const auto row = logits.row(t);
    const S mx = row.maxCoeff();
    Vec<S> p = (row.array() - mx).exp().transpose();
    p /= p.sum();
    std::iota(idx.begin(), idx.end(), 0);
    std::partial_sort(idx.begin(), idx.begin() + k, idx.end(),
                      [&](int a, int b) { return p(a) > p(b) || (p(a) == p(b) && a < b); });
    S sum = 0;
    for (int j = 0; j < k; ++j) sum += p(idx[size_t(j)]);
    for (int j = 0; j < k; ++j) {
      r.expert(t, j) = idx[size_t(j)];
      r.weight(t, j) = p(idx[size_t(j)]) / sum;
    }
  }
  return r;
}

template Routes<float> moe_router(const Mat<float>&, int);
template Routes<double> moe_router(const Mat<double>&, int);

}  // namespace hl::ref
