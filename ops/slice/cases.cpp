// slice: its cases, at test, quick and full scale (inputs, shapes, the bytes and flops each must move and compute),
// which its tests and experiment run, and its golden case.
#include "ops/cases.h"
#include "ops/slice/reference.h"

namespace hl::gpu {

namespace {

// slice's cases: the column ranges the Gated DeltaNet takes of its conv output (q, k, v of 8192 channels) and an
// odd small one.
std::vector<Case> cases(Scale s) {
  std::vector<Case> v;
  const int64_t T = s == Scale::Test ? 3 : s == Scale::Quick ? 64 : 512;
  for (auto [period, offset, width] : {std::tuple<int64_t, int64_t, int64_t>{24, 8, 8}, {8192, 2048, 2048}, {8192, 4096, 4096}}) {
    Case c;
    c.label = fmt::format("T={} [{}, {}) of {}", T, offset, offset + width, period);
    c.shape = {{"T", double(T)}, {"period", double(period)}, {"width", double(width)}};
    c.cost = {8.0 * double(T * width * (period == 24 ? 4 : 1)), 0};
    // Init-captures: clang before 16 cannot capture structured bindings ([=] here broke make fuzz's clang 14 build).
    c.inputs = [T, period = period, offset = offset, width = width](std::mt19937_64& g) {
      return OpArgs{{{"x", Tensor::from(randn(g, T, period == 24 ? 96 : period))}}, {},
                    {{"period", double(period)}, {"offset", double(offset)}, {"width", double(width)}}};
    };
    v.push_back(c);
  }
  return v;
}
constexpr double kTolerance = 0;  // a copy

// Its golden case (golden/ops/): inputs drawn with the slot's seed, the oracle's outputs in f32 and f64.
std::vector<OpCase> goldens() {
  std::vector<OpCase> v;
  v.push_back({"slice", 3, "x [3, 4 * 24]: columns [8, 16) of every block of 24",
               [](auto& g) { return TensorMap{{"x", golden_case::randn(g, 3, 96)}}; },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() { return TensorMap{{"y", golden_case::out(ref::slice(golden_case::in<S>(m, "x"), 24, 8, 8))}}; };
                 return golden_case::dispatch(p, f);
               }});
  return v;
}

}  // namespace

OpDef slice_with_cases(OpDef d) {
  d.cases = cases;
  d.tolerance = kTolerance;
  d.goldens = goldens();
  return d;
}

}  // namespace hl::gpu
