// gated_rmsnorm: its cases, at test, quick and full scale (inputs, shapes, the bytes and flops each must move and compute),
// which its tests and experiment run, and its golden case.
#include "ops/cases.h"
#include "ops/gated_rmsnorm/reference.h"

namespace hl::gpu {

namespace {

// gated_rmsnorm's cases: the Gated DeltaNet's output norm over 32 value heads of 128.
std::vector<Case> cases(Scale s) {
  std::vector<Case> v;
  const std::vector<int64_t> Ts = s == Scale::Test ? std::vector<int64_t>{1, 5} : s == Scale::Quick ? std::vector<int64_t>{1, 64}
                                                                                                   : std::vector<int64_t>{1, 64, 512, 4096};
  for (int64_t T : Ts) {
    Case c;
    c.label = fmt::format("T={}", T);
    c.shape = {{"T", double(T)}, {"width", 4096.0}, {"group", 128.0}};
    c.cost = {4.0 * double(T * 4096) * 3 + 4.0 * 128, double(T * 4096) * 8};
    c.inputs = [T](std::mt19937_64& g) {
      return OpArgs{{{"o", Tensor::from(randn(g, T, 4096))}, {"z", Tensor::from(randn(g, T, 4096))}},
                    {{"gain", weight("gain", randn(g, 1, 128, 0.2, 1.0))}}, {{"eps", 1e-6}}};
    };
    v.push_back(c);
  }
  return v;
}
constexpr double kTolerance = 1e-5;

// Its golden case (golden/ops/): inputs drawn with the slot's seed, the oracle's outputs in f32 and f64.
std::vector<OpCase> goldens() {
  std::vector<OpCase> v;
  v.push_back({"gated_rmsnorm", 10, "o, z [4, 32 * 128], gain [128]",
               [](auto& g) {
                 return TensorMap{{"o", golden_case::randn(g, 4, 4096)}, {"z", golden_case::randn(g, 4, 4096)}, {"gain", golden_case::randn(g, 1, 128, 0.2, 1.0)}};
               },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() {
                   return TensorMap{{"y", golden_case::out(ref::gated_rmsnorm(golden_case::in<S>(m, "o"), golden_case::in<S>(m, "z"), golden_case::in_vec<S>(m, "gain"), 1e-6))}};
                 };
                 return golden_case::dispatch(p, f);
               }});
  return v;
}

}  // namespace

OpDef gated_rmsnorm_with_cases(OpDef d) {
  d.cases = cases;
  d.tolerance = kTolerance;
  d.goldens = goldens();
  return d;
}

}  // namespace hl::gpu
