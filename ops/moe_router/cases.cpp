// moe_router: its cases, at test, quick and full scale (inputs, shapes, the bytes and flops each must move and compute),
// which its tests and experiment run, and its golden case.
#include "ops/cases.h"
#include "ops/moe_router/reference.h"

namespace hl::gpu {

namespace {

// moe_router's cases: softmax over 256 experts, top-8, for T = 1..512 tokens; small ones with k = 4 of 32 and
// exactly tied logits (ties keep the lower id).
Case router_case(int64_t T, int64_t E, int64_t k, bool ties) {
  Case c;
  c.label = fmt::format("T={}{}{}", T, E == 256 ? "" : fmt::format(" top-{} of {}", k, E), ties ? " tied" : "");
  c.shape = {{"T", double(T)}, {"experts", double(E)}, {"k", double(k)}};
  c.cost = {4.0 * double(T * E + 2 * T * k), 5.0 * double(T * E)};
  c.inputs = [=](std::mt19937_64& g) {
    Mat<float> l = randn(g, T, E, 2.0);
    if (ties)
      for (int64_t t = 0; t < T; ++t) l(t, E - 1) = l(t, 1), l(t, 2) = l(t, 0) = 3.0f;
    return OpArgs{{{"logits", Tensor::from(l)}}, {}, {{"k", double(k)}}};
  };
  return c;
}

std::vector<Case> cases(Scale s) {
  std::vector<Case> v;
  if (s == Scale::Test) {
    v.push_back(router_case(16, 256, 8, false));
    v.push_back(router_case(3, 32, 4, false));
    v.push_back(router_case(5, 32, 4, true));
    return v;
  }
  const int64_t E = s == Scale::Quick ? 32 : 256;
  for (int64_t T : s == Scale::Quick ? std::vector<int64_t>{1, 8, 64} : std::vector<int64_t>{1, 8, 64, 512})
    v.push_back(router_case(T, E, 8, false));
  return v;
}
constexpr double kTolerance = 1e-6;  // identical expert ids required; weights are a softmax of k values

// Its golden case (golden/ops/): inputs drawn with the slot's seed, the oracle's outputs in f32 and f64.
std::vector<OpCase> goldens() {
  std::vector<OpCase> v;
  v.push_back({"moe_router", 11, "logits [16, 256], top-8",
               [](auto& g) { return TensorMap{{"logits", golden_case::randn(g, 16, 256, 2.0)}}; },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() {
                   auto r = ref::moe_router(golden_case::in<S>(m, "logits"), 8);
                   return TensorMap{{"expert", r.expert.template cast<double>()}, {"weight", golden_case::out(r.weight)}};
                 };
                 return golden_case::dispatch(p, f);
               }});
  return v;
}

}  // namespace

OpDef moe_router_with_cases(OpDef d) {
  d.cases = cases;
  d.tolerance = kTolerance;
  d.goldens = goldens();
  return d;
}

}  // namespace hl::gpu
