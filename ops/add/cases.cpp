// add: its cases, at test, quick and full scale (inputs, shapes, the bytes and flops each must move and compute),
// which its tests and experiment run.
#include "ops/cases.h"

namespace hl::gpu {

namespace {

// add's cases: the residual stream, [T, 2048].
std::vector<Case> cases(Scale s) {
  std::vector<Case> v;
  for (int64_t T : s == Scale::Test ? std::vector<int64_t>{1, 3} : std::vector<int64_t>{1, 512}) {
    const int64_t H = s == Scale::Test && T > 1 ? 1001 : 2048;
    Case c;
    c.label = fmt::format("T={} width={}", T, H);
    c.shape = {{"T", double(T)}, {"width", double(H)}};
    c.cost = {12.0 * double(T * H), double(T * H)};
    c.inputs = [=](std::mt19937_64& g) { return OpArgs{{{"a", Tensor::from(randn(g, T, H))}, {"b", Tensor::from(randn(g, T, H))}}, {}, {}}; };
    v.push_back(c);
  }
  return v;
}
constexpr double kTolerance = 0;  // one f32 add per element: exact

}  // namespace

OpDef add_with_cases(OpDef d) {
  d.cases = cases;
  d.tolerance = kTolerance;

  return d;
}

}  // namespace hl::gpu
