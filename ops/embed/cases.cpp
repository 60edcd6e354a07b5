// embed: its cases, at test, quick and full scale (inputs, shapes, the bytes and flops each must move and compute),
// which its tests and experiment run, and its golden case.
#include "ops/cases.h"
#include "ops/embed/reference.h"

namespace hl::gpu {

namespace {

// embed's cases: a few token ids into a small table, and the model's width.
std::vector<Case> cases(Scale s) {
  std::vector<Case> v;
  for (auto [V, H, T] : {std::tuple<int64_t, int64_t, int64_t>{50, 32, 7}, {s == Scale::Full ? 248320 : 4096, 2048, s == Scale::Test ? 3 : 512}}) {
    Case c;
    c.label = fmt::format("V={} H={} T={}", V, H, T);
    c.shape = {{"T", double(T)}, {"vocab", double(V)}, {"hidden", double(H)}};
    c.cost = {4.0 * double(T) * (2 * H + 1), 0};
    // Init-captures: clang before 16 cannot capture structured bindings ([=] here broke make fuzz's clang 14 build).
    c.inputs = [V = V, H = H, T = T](std::mt19937_64& g) {
      IMat ids(1, T);
      std::uniform_int_distribution<int32_t> pick(0, int32_t(V - 1));
      for (int64_t t = 0; t < T; ++t) ids(0, t) = pick(g);
      ids(0, 0) = int32_t(V - 1);  // the last row too
      return OpArgs{{{"tokens", Tensor::from_i32(ids)}}, {{"table", random_weight(g, "table", V, H, 1.0)}}, {}};
    };
    v.push_back(c);
  }
  return v;
}
constexpr double kTolerance = 0;  // a copy

// Its golden case (golden/ops/): inputs drawn with the slot's seed, the oracle's outputs in f32 and f64.
std::vector<OpCase> goldens() {
  std::vector<OpCase> v;
  v.push_back({"embed", 14, "table [50, 32], 7 tokens",
               [](auto& g) {
                 Mat<double> t(1, 7);
                 t << 0, 49, 3, 3, 17, 8, 42;
                 return TensorMap{{"table", golden_case::randn(g, 50, 32)}, {"tokens", t}};
               },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() {
                   const Mat<double>& t = m.at("tokens");
                   std::vector<int32_t> ids(t.data(), t.data() + t.size());
                   auto table = whole(host_source("table", m.at("table").cast<float>()));
                   return TensorMap{{"y", golden_case::out(ref::embed<S>(table, ids))}};
                 };
                 return golden_case::dispatch(p, f);
               }});
  return v;
}

}  // namespace

OpDef embed_with_cases(OpDef d) {
  d.cases = cases;
  d.tolerance = kTolerance;
  d.goldens = goldens();
  return d;
}

}  // namespace hl::gpu
