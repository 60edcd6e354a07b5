// l2norm: its cases, at test, quick and full scale (inputs, shapes, the bytes and flops each must move and compute),
// which its tests and experiment run, and its golden case.
#include "ops/cases.h"
#include "ops/l2norm/reference.h"

namespace hl::gpu {

namespace {

// l2norm's cases: the Gated DeltaNet's 16 key heads of 128 (q scaled by 1/sqrt(128), k by 1).
std::vector<Case> cases(Scale s) {
  std::vector<Case> v;
  const std::vector<int64_t> Ts = s == Scale::Test ? std::vector<int64_t>{1, 5} : s == Scale::Quick ? std::vector<int64_t>{1, 64}
                                                                                                   : std::vector<int64_t>{1, 64, 512, 4096};
  for (int64_t T : Ts) {
    Case c;
    c.label = fmt::format("T={}", T);
    c.shape = {{"T", double(T)}, {"width", 2048.0}, {"group", 128.0}};
    c.cost = {8.0 * double(T) * 2048, 4.0 * double(T) * 2048};
    c.inputs = [T](std::mt19937_64& g) {
      return OpArgs{{{"x", Tensor::from(randn(g, T, 2048))}}, {}, {{"head_dim", 128}, {"scale", 1 / std::sqrt(128.0)}, {"eps", 1e-6}}};
    };
    v.push_back(c);
  }
  return v;
}
constexpr double kTolerance = 1e-5;

// Its golden case (golden/ops/): inputs drawn with the slot's seed, the oracle's outputs in f32 and f64.
std::vector<OpCase> goldens() {
  std::vector<OpCase> v;
  v.push_back({"l2norm", 7, "x [4, 16 * 128], scale 1/sqrt(128)",
               [](auto& g) { return TensorMap{{"x", golden_case::randn(g, 4, 2048)}}; },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() {
                   return TensorMap{{"y", golden_case::out(ref::l2norm(golden_case::in<S>(m, "x"), 128, S(1 / std::sqrt(128.0)), 1e-6))}};
                 };
                 return golden_case::dispatch(p, f);
               }});
  return v;
}

}  // namespace

OpDef l2norm_with_cases(OpDef d) {
  d.cases = cases;
  d.tolerance = kTolerance;
  d.goldens = goldens();
  return d;
}

}  // namespace hl::gpu
