// ssm_gates: its cases, at test, quick and full scale (inputs, shapes, the bytes and flops each must move and compute),
// which its tests and experiment run, and its golden case.
#include "ops/cases.h"
#include "ops/ssm_gates/reference.h"

namespace hl::gpu {

namespace {

// ssm_gates' cases: the 32 value heads' gates; b and a wide enough to cover softplus's whole range.
std::vector<Case> cases(Scale s) {
  std::vector<Case> v;
  for (int64_t T : s == Scale::Test ? std::vector<int64_t>{1, 6} : std::vector<int64_t>{1, 512}) {
    Case c;
    c.label = fmt::format("T={}", T);
    c.shape = {{"T", double(T)}, {"value_heads", 32.0}};
    c.cost = {16.0 * double(T * 32) + 8.0 * 32, 20.0 * double(T * 32)};
    c.inputs = [T](std::mt19937_64& g) {
      return OpArgs{{{"b", Tensor::from(randn(g, T, 32, 4.0))}, {"a", Tensor::from(randn(g, T, 32, 8.0))}},
                    {{"A", weight("A", Mat<float>(-randn(g, 1, 32).array().exp().matrix()))}, {"dt_bias", weight("dt_bias", randn(g, 1, 32))}},
                    {}};
    };
    v.push_back(c);
  }
  return v;
}
constexpr double kTolerance = 1e-6;  // exp, log1p and a sigmoid in f32

// Its golden case (golden/ops/): inputs drawn with the slot's seed, the oracle's outputs in f32 and f64.
std::vector<OpCase> goldens() {
  std::vector<OpCase> v;
  v.push_back({"ssm_gates", 8, "b, a [6, 32]; A = -exp(A_log), dt_bias [32]",
               [](auto& g) {
                 Mat<double> A = -golden_case::uniform(g, 1, 32, -1.0, 1.5).array().exp();
                 return TensorMap{{"b", golden_case::randn(g, 6, 32, 2.0)}, {"a", golden_case::randn(g, 6, 32, 4.0)},
                                  {"A", A.cast<float>().cast<double>()}, {"dt_bias", golden_case::randn(g, 1, 32, 0.5)}};
               },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() {
                   auto r = ref::ssm_gates(golden_case::in<S>(m, "b"), golden_case::in<S>(m, "a"), golden_case::in_vec<S>(m, "A"), golden_case::in_vec<S>(m, "dt_bias"));
                   return TensorMap{{"beta", golden_case::out(r.beta)}, {"g", golden_case::out(r.g)}};
                 };
                 return golden_case::dispatch(p, f);
               }});
  return v;
}

}  // namespace

OpDef ssm_gates_with_cases(OpDef d) {
  d.cases = cases;
  d.tolerance = kTolerance;
  d.goldens = goldens();
  return d;
}

}  // namespace hl::gpu
