// rmsnorm: its cases, at test, quick and full scale (inputs, shapes, the bytes and flops each must move and compute),
// which its tests and experiment run, and its golden case.
#include "ops/cases.h"
#include "ops/rmsnorm/reference.h"

namespace hl::gpu {

namespace {

// rmsnorm's cases: the hidden-width norm (input, post-attention and final norms) and the q/k head norm.
Case norm_case(int64_t T, int64_t width, int64_t group, std::string group_name) {
  Case c;
  c.label = fmt::format("T={}{}", T, group == width ? "" : " " + group_name);
  c.group = group_name;
  c.shape = {{"T", double(T)}, {"width", double(width)}, {"group", double(group)}};
  c.cost = {4.0 * double(T * width) * 2 + 4.0 * double(group), double(T * width) * 4};  // x read, y written, the gain
  c.inputs = [=](std::mt19937_64& g) {
    return OpArgs{{{"x", Tensor::from(randn(g, T, width, 3.0))}}, {{"gain", weight("gain", randn(g, 1, group, 0.2, 1.0))}}, {{"eps", 1e-6}}};
  };
  return c;
}

std::vector<Case> cases(Scale s) {
  std::vector<Case> v;
  const std::vector<int64_t> Ts = s == Scale::Test ? std::vector<int64_t>{1, 5} : s == Scale::Quick ? std::vector<int64_t>{1, 64}
                                                                                                   : std::vector<int64_t>{1, 64, 512, 4096};
  for (int64_t T : Ts) v.push_back(norm_case(T, 2048, 2048, "hidden"));
  for (int64_t T : Ts) v.push_back(norm_case(T, 16 * 256, 256, "q_norm"));
  if (s == Scale::Test) v.push_back(norm_case(3, 3 * 40, 40, "odd"));  // a group that is no multiple of 4
  return v;
}
// f32 sums of up to 2048 squares in another order than Eigen's: well inside 1e-5 relative L2.
constexpr double kTolerance = 1e-5;

// Its golden cases (golden/ops/): inputs drawn with the slot's seed, the oracle's outputs in f32 and f64.
std::vector<OpCase> goldens() {
  std::vector<OpCase> v;
  v.push_back({"rmsnorm", 0, "x [8, 2048], gain [2048]",
               [](auto& g) { return TensorMap{{"x", golden_case::randn(g, 8, 2048, 3.0)}, {"gain", golden_case::randn(g, 1, 2048, 0.2, 1.0)}}; },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() { return TensorMap{{"y", golden_case::out(ref::rmsnorm(golden_case::in<S>(m, "x"), golden_case::in_vec<S>(m, "gain"), 1e-6))}}; };
                 return golden_case::dispatch(p, f);
               }});
  v.push_back({"rmsnorm_heads", 1, "q/k norm: x [5, 16 * 256], gain [256]",
               [](auto& g) { return TensorMap{{"x", golden_case::randn(g, 5, 4096)}, {"gain", golden_case::randn(g, 1, 256, 0.2, 1.0)}}; },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() { return TensorMap{{"y", golden_case::out(ref::rmsnorm(golden_case::in<S>(m, "x"), golden_case::in_vec<S>(m, "gain"), 1e-6))}}; };
                 return golden_case::dispatch(p, f);
               }});
  return v;
}

}  // namespace

OpDef rmsnorm_with_cases(OpDef d) {
  d.cases = cases;
  d.tolerance = kTolerance;
  d.goldens = goldens();
  return d;
}

}  // namespace hl::gpu
