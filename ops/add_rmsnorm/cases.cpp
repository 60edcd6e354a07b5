// add_rmsnorm: its cases, at test, quick and full scale (inputs, shapes, the bytes and flops each must move and compute),
// which its tests and experiment run.
#include "ops/cases.h"

namespace hl::gpu {

namespace {

// add_rmsnorm's cases: the residual add and the hidden-width norm after it, with one addend (after attention) or
// two (after the MoE block: routed + shared).
std::vector<Case> cases(Scale s) {
  std::vector<Case> v;
  const std::vector<int64_t> Ts = s == Scale::Test ? std::vector<int64_t>{1, 5} : std::vector<int64_t>{1, 64, 512};
  for (bool two : {false, true})
    for (int64_t T : Ts) {
      const int64_t H = s == Scale::Test && T > 1 ? 520 : 2048;  // a width that is no multiple of the workgroup
      Case c;
      c.label = fmt::format("T={}{}", T, two ? " two addends" : "");
      c.group = two ? "two addends" : "one addend";
      c.shape = {{"T", double(T)}, {"width", double(H)}};
      c.cost = {4.0 * double(T * H) * (two ? 5 : 4) + 4.0 * double(H), double(T * H) * (two ? 6 : 5)};
      c.inputs = [=](std::mt19937_64& g) {
        OpArgs a{{{"x", Tensor::from(randn(g, T, H, 3.0))}, {"a", Tensor::from(randn(g, T, H))}},
                 {{"gain", weight("gain", randn(g, 1, H, 0.2, 1.0))}}, {{"eps", 1e-6}}};
        if (two) a.set("b", Tensor::from(randn(g, T, H)));
        return a;
      };
      v.push_back(c);
    }
  return v;
}
constexpr double kTolerance = 1e-5;

}  // namespace

OpDef add_rmsnorm_with_cases(OpDef d) {
  d.cases = cases;
  d.tolerance = kTolerance;

  return d;
}

}  // namespace hl::gpu
