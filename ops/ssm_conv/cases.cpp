// ssm_conv: its cases, at test, quick and full scale (inputs, shapes, the bytes and flops each must move and compute),
// which its tests and experiment run, and its golden case.
#include "ops/cases.h"
#include "ops/ssm_conv/reference.h"

namespace hl::gpu {

namespace {

// ssm_conv's cases: the GDN causal depthwise conv (8192 channels, kernel 4) with a carried state, + silu. Bytes: x
// read, y written, taps and the state read and written; ~2K + 4 flops per output: memory bound.
std::vector<Case> cases(Scale s) {
  std::vector<Case> v;
  const int64_t K = 4;
  const std::vector<int64_t> Ts = s == Scale::Test ? std::vector<int64_t>{1, 5, 37} : s == Scale::Quick ? std::vector<int64_t>{1, 64}
                                                                                                       : std::vector<int64_t>{1, 64, 512, 4096};
  for (int64_t T : Ts) {
    const int64_t C = s == Scale::Test && T == 37 ? 520 : 8192;
    Case c;
    c.label = fmt::format("T={}{}", T, C == 8192 ? "" : fmt::format(" C={}", C));
    c.shape = {{"T", double(T)}, {"channels", double(C)}, {"kernel", double(K)}};
    c.cost = {4.0 * double(2 * T * C + C * K + 2 * (K - 1) * C), double(T * C * (2 * K + 4))};
    c.inputs = [=](std::mt19937_64& g) {
      return OpArgs{{{"x", Tensor::from(randn(g, T, C))}, {"state", Tensor::from(randn(g, K - 1, C))}},
                    {{"w", weight("conv", randn(g, C, K, 0.3))}}, {}};
    };
    v.push_back(c);
  }
  return v;
}
constexpr double kTolerance = 1e-6;  // four f32 products and a silu per output

// Its golden case (golden/ops/): inputs drawn with the slot's seed, the oracle's outputs in f32 and f64.
std::vector<OpCase> goldens() {
  std::vector<OpCase> v;
  v.push_back({"ssm_conv", 6, "8192 channels, kernel 4, 5 tokens, carried state [3, 8192]",
               [](auto& g) {
                 return TensorMap{{"x", golden_case::randn(g, 5, 8192)}, {"w", golden_case::randn(g, 8192, 4, 0.3)}, {"state", golden_case::randn(g, 3, 8192)}};
               },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() {
                   Mat<S> st = golden_case::in<S>(m, "state");
                   auto y = ref::ssm_conv(golden_case::in<S>(m, "x"), golden_case::in<S>(m, "w"), st);
                   return TensorMap{{"y", golden_case::out(y)}, {"state", golden_case::out(st)}};
                 };
                 return golden_case::dispatch(p, f);
               }});
  return v;
}

}  // namespace

OpDef ssm_conv_with_cases(OpDef d) {
  d.cases = cases;
  d.tolerance = kTolerance;
  d.goldens = goldens();
  return d;
}

}  // namespace hl::gpu
