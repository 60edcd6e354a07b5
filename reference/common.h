// Shared vocabulary of the oracle: Eigen matrix types, the error type, and small numeric helpers.
#pragma once
#include <Eigen/Dense>
#include <cmath>
#include <cstdint>
#include <fmt/format.h>
#include <stdexcept>
#include <string>
#include <vector>

namespace hl {

// Activations are row-major [tokens, features] (one token per row); weights are row-major [out, in]
// like PyTorch's nn.Linear, so y = x W^T.
template <class S> using Mat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class S> using Vec = Eigen::Matrix<S, Eigen::Dynamic, 1>;
using IMat = Eigen::Matrix<int32_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Every user-facing failure (bad file, bad shape, bad flag) is an Error with a one-line message.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <class... A>
[[noreturn]] inline void fail(fmt::format_string<A...> f, A&&... a) {
  throw Error(fmt::format(f, std::forward<A>(a)...));
}

enum class Precision { F32, F64 };

// Prefill feeds a chunk of prompt tokens; decode feeds one token and steps the recurrences.
enum class Phase { Prefill, Decode };

template <class S> inline S sigmoid(S x) { return S(1) / (S(1) + std::exp(-x)); }
template <class S> inline S silu(S x) { return x * sigmoid(x); }
// torch.nn.functional.softplus with beta=1, threshold=20 (SPEC 10.6).
template <class S> inline S softplus(S x) { return x > S(20) ? x : std::log1p(std::exp(x)); }

// Relative L2 distance ||a-b|| / ||b||, computed in double: the error measure used by every comparison.
template <class A, class B> double rel_l2(const A& a, const B& b) {
  const auto d = (a.template cast<double>() - b.template cast<double>()).norm();
  const auto n = b.template cast<double>().norm();
  return n == 0 ? d : d / n;
}
// Fraction of rows whose largest entry sits at the same column (logits: greedy-token agreement).
template <class A, class B> double argmax_agreement(const A& a, const B& b) {
  int64_t same = 0;
  for (int64_t r = 0; r < a.rows(); ++r) {
    Eigen::Index i, j;
    a.row(r).maxCoeff(&i);
    b.row(r).maxCoeff(&j);
    same += i == j;
  }
  return a.rows() ? double(same) / double(a.rows()) : 1.0;
}
template <class A, class B> double max_abs(const A& a, const B& b) {
  return (a.template cast<double>() - b.template cast<double>()).cwiseAbs().maxCoeff();
}

}  // namespace hl
