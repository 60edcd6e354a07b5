// rope: its cases, at test, quick and full scale (inputs, shapes, the bytes and flops each must move and compute),
// which its tests and experiment run, and its golden case.
#include "ops/cases.h"
#include "ops/rope/reference.h"

namespace hl::gpu {

namespace {

// rope's cases: the attention layers' q (16 heads) and k (2 heads) of 256 dims, 64 of them rotated, at small and
// large positions (the angle reduction must hold at 10^6).
std::vector<Case> cases(Scale s) {
  std::vector<Case> v;
  const std::vector<int64_t> Ts = s == Scale::Test ? std::vector<int64_t>{1, 6} : std::vector<int64_t>{1, 512};
  for (int64_t heads : {16, 2})
    for (int64_t T : Ts)
      for (int64_t pos0 : {int64_t(0), int64_t(1000000)}) {
        Case c;
        c.label = fmt::format("T={} heads={} pos0={}", T, heads, pos0);
        c.shape = {{"T", double(T)}, {"heads", double(heads)}, {"pos0", double(pos0)}};
        c.cost = {8.0 * double(T * heads * 256), 6.0 * double(T * heads * 32)};
        c.inputs = [=](std::mt19937_64& g) {
          return OpArgs{{{"x", Tensor::from(randn(g, T, heads * 256))}}, {},
                        {{"head_dim", 256}, {"rot_dims", 64}, {"theta", 1e7}, {"pos0", double(pos0)}}};
        };
        v.push_back(c);
      }
  return v;
}
// sin/cos of angles reduced in 64-bit fixed point against the oracle's double angles: ~1e-7 per value.
constexpr double kTolerance = 1e-6;

// Its golden case (golden/ops/): inputs drawn with the slot's seed, the oracle's outputs in f32 and f64.
std::vector<OpCase> goldens() {
  std::vector<OpCase> v;
  v.push_back({"rope", 4, "x [6, 2 * 256], 64 rotary dims, theta 1e7, positions 1000..1005",
               [](auto& g) { return TensorMap{{"x", golden_case::randn(g, 6, 512)}}; },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() { return TensorMap{{"y", golden_case::out(ref::rope(golden_case::in<S>(m, "x"), 256, 64, 1e7, 1000))}}; };
                 return golden_case::dispatch(p, f);
               }});
  return v;
}

}  // namespace

OpDef rope_with_cases(OpDef d) {
  d.cases = cases;
  d.tolerance = kTolerance;
  d.goldens = goldens();
  return d;
}

}  // namespace hl::gpu
