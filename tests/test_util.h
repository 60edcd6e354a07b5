// Helpers shared by the tests: where the project's data lives, and random matrices.
#pragma once
#include <cstdlib>
#include <random>
#include <string>

#include "common.h"

// Registers fn to run after the tests, before static destruction (tests/catch_main.cpp): what holds a Vulkan device.
extern "C" void hl_test_at_teardown(void (*fn)());

namespace hl::test {

// The project root (set by CTest); tests never read ../shared.
inline std::string root() {
  const char* r = std::getenv("HYBRIDLAB_ROOT");
  return r ? r : ".";
}
inline std::string hf_tiny() { return root() + "/golden/hf-tiny"; }

template <class S = float> Mat<S> randn(std::mt19937_64& g, int64_t r, int64_t c, double std = 1.0, double mean = 0) {
  std::normal_distribution<double> d(mean, std);
  Mat<S> m(r, c);
  for (int64_t i = 0; i < m.size(); ++i) m.data()[i] = S(d(g));
  return m;
}

}  // namespace hl::test
