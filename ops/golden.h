// Golden cases: an op's small case whose inputs and oracle outputs (f32 and f64) are stored in
// golden/ops/<name>.safetensors (`make golden`); the tests recompute the outputs from the stored inputs, so any
// change to the oracle's numbers is caught. Each op's goldens are in its cases.cpp; ops/cases.h lists them all.
#pragma once
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "common.h"

namespace hl {

using TensorMap = std::map<std::string, Mat<double>>;

struct OpCase {
  std::string name;  // golden/ops/<name>.safetensors
  int slot = 0;      // its inputs' seed is seed * 1000003 + slot: fixed per case, whatever the order of the list
  std::string about;  // shapes, in one line
  std::function<TensorMap(std::mt19937_64&)> inputs;              // float-representable values
  std::function<TensorMap(const TensorMap&, Precision)> compute;  // the oracle in f32 or f64
};

namespace golden_case {

inline Mat<double> randn(std::mt19937_64& rng, int64_t r, int64_t c, double std = 1.0, double mean = 0.0) {
  std::normal_distribution<double> d(mean, std);
  Mat<double> m(r, c);
  for (int64_t i = 0; i < m.size(); ++i) m.data()[i] = double(float(d(rng)));  // float-representable
  return m;
}

inline Mat<double> uniform(std::mt19937_64& rng, int64_t r, int64_t c, double lo, double hi) {
  std::uniform_real_distribution<double> d(lo, hi);
  Mat<double> m(r, c);
  for (int64_t i = 0; i < m.size(); ++i) m.data()[i] = double(float(d(rng)));
  return m;
}

inline Mat<double> unit_rows(Mat<double> m, int d, double scale) {  // l2-normalised heads, rounded to float
  for (int64_t r = 0; r < m.rows(); ++r)
    for (int64_t g = 0; g < m.cols(); g += d) m.row(r).segment(g, d) *= scale / m.row(r).segment(g, d).norm();
  return m.cast<float>().cast<double>();
}

template <class S> Mat<S> in(const TensorMap& m, const char* name) { return m.at(name).template cast<S>(); }
template <class S> Vec<S> in_vec(const TensorMap& m, const char* name) {
  const Mat<double>& x = m.at(name);
  return Eigen::Map<const Vec<double>>(x.data(), x.size()).template cast<S>();
}
template <class S> Mat<double> out(const Mat<S>& x) { return x.template cast<double>(); }

// Runs f<float> or f<double>.
template <class F> TensorMap dispatch(Precision p, F&& f) {
  return p == Precision::F64 ? f.template operator()<double>() : f.template operator()<float>();
}

}  // namespace golden_case
}  // namespace hl
