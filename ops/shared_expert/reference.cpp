#include "ops/shared_expert/reference.h"

namespace hl::ref {

template <class S> Mat<S> shared_expert(const Mat<S>& x, const ExpertMats<S>& e, const Vec<S>& gate_w) {
  if (gate_w.size() != x.cols()) fail("shared_expert: gate weight [{}] does not fit {} columns", gate_w.size(), x.cols());
  const Vec<S> sg = (x * gate_w).unaryExpr([](S v) { return sigmoid(v); });
  return sg.asDiagonal() * expert_mlp(x, e);
}

template Mat<float> shared_expert(const Mat<float>&, const ExpertMats<float>&, const Vec<float>&);
template Mat<double> shared_expert(const Mat<double>&, const ExpertMats<double>&, const Vec<double>&);

}  // namespace hl::ref
