// moe_experts: its cases, at test, quick and full scale (inputs, shapes, the bytes and flops each must move and compute),
// which its tests and experiment run, and its golden case.
#include <numeric>
#include <set>
#include "ops/cases.h"
#include "ops/moe_experts/reference.h"

namespace hl::gpu {

namespace {

// moe_experts' cases: one MoE layer's routed experts (SwiGLU, width 512, hidden 2048) for T = 1..512 tokens, with
// f32 experts and with the GGUF's quantized experts (q4_K gate/up, q6_K down, read as blocks). Bytes count each
// expert some token routes to once (f32: 3 x 512 x 2048 x 4 bytes; quantized: its blocks), so small T is
// weight-streaming bound; flops 6 F H per (token, slot). Quick: 32 experts, hidden 256 (quantized: width 256, whole
// 256-value blocks in a down row). Groups: "f32", "q4_K".
Case experts_case(int64_t T, int64_t E, int64_t k, int64_t F, int64_t H, bool quantized) {
  // Routes drawn once per case (the same for every input rotation), so the bytes can be counted.
  std::mt19937_64 rg(uint64_t(T) * 7919 + uint64_t(E));
  IMat ids(T, k);
  Mat<float> w(T, k);
  std::set<int> used;
  for (int64_t t = 0; t < T; ++t) {
    std::vector<int> perm(static_cast<size_t>(E));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rg);
    float sum = 0;
    for (int64_t j = 0; j < k; ++j) {
      ids(t, j) = perm[size_t(j)], used.insert(perm[size_t(j)]);
      sum += (w(t, j) = std::uniform_real_distribution<float>(0.1f, 1.0f)(rg));
    }
    w.row(t) /= sum;
  }
  Case c;
  c.label = fmt::format("{}T={}{}", quantized ? "q4_K " : "", T, E == 256 ? "" : fmt::format(" {} experts of {} x {}", E, F, H));
  c.group = quantized ? "q4_K" : "f32";
  c.shape = {{"T", double(T)}, {"experts", double(E)}, {"k", double(k)}, {"experts_used", double(used.size())}, {"width", double(F)}};
  const double expert_bytes = quantized ? double(2 * quant::row_bytes(quant::Type::Q4_K, H) * F + quant::row_bytes(quant::Type::Q6_K, F) * H)
                                        : 4.0 * 3 * double(F * H);
  c.cost = {double(used.size()) * expert_bytes + 4.0 * double(2 * T * H + 2 * T * k), 6.0 * double(T * k * F * H)};
  c.inputs = [=](std::mt19937_64& g) {
    auto wt = [&](const char* name, int64_t rows, int64_t cols, quant::Type t) {
      return quantized ? random_quantized(g, name, rows, cols, t, 1 / std::sqrt(double(cols)))
                       : random_weight(g, name, rows, cols, 1 / std::sqrt(double(cols)));
    };
    return OpArgs{{{"x", Tensor::from(randn(g, T, H))}, {"expert", Tensor::from_i32(ids)}, {"weight", Tensor::from(w)}},
                  {{"gate", wt("gate", E * F, H, quant::Type::Q4_K)},
                   {"up", wt("up", E * F, H, quant::Type::Q4_K)},
                   {"down", wt("down", E * H, F, quant::Type::Q6_K)}},
                  {{"n_experts", double(E)}}};
  };
  return c;
}

std::vector<Case> cases(Scale s) {
  std::vector<Case> v;
  if (s == Scale::Test) {
    for (int64_t T : {1, 6, 37}) v.push_back(experts_case(T, 8, 2, 64, 256, false));
    for (int64_t T : {1, 5}) v.push_back(experts_case(T, 4, 2, 256, 256, true));
    return v;
  }
  const bool quick = s == Scale::Quick;
  const int64_t E = quick ? 32 : 256, F = quick ? 64 : 512, H = quick ? 256 : 2048, QF = quick ? 256 : F;
  const std::vector<int64_t> Ts = quick ? std::vector<int64_t>{1, 8, 64} : std::vector<int64_t>{1, 8, 64, 512};
  for (int64_t T : Ts) v.push_back(experts_case(T, E, 8, F, H, false));
  for (int64_t T : Ts) v.push_back(experts_case(T, E, 8, QF, H, true));
  return v;
}
constexpr double kTolerance = 1e-5;  // dot products over 2048 and 512 terms in another order

// Its golden case (golden/ops/): inputs drawn with the slot's seed, the oracle's outputs in f32 and f64.
std::vector<OpCase> goldens() {
  std::vector<OpCase> v;
  v.push_back({"moe_experts", 12, "x [6, 256]; 8 experts of width 64, top-2 routes",
               [](auto& g) {
                 TensorMap m{{"x", golden_case::randn(g, 6, 256)}};
                 Mat<double> ex(6, 2), w(6, 2);
                 std::uniform_int_distribution<int> pick(0, 7);
                 for (int t = 0; t < 6; ++t) {
                   ex(t, 0) = pick(g);
                   do ex(t, 1) = pick(g); while (ex(t, 1) == ex(t, 0));
                   w(t, 0) = double(float(std::uniform_real_distribution<double>(0.5, 1.0)(g)));
                   w(t, 1) = double(float(1.0 - w(t, 0)));
                 }
                 m["expert"] = ex, m["weight"] = w;
                 for (int e = 0; e < 8; ++e) {
                   m[fmt::format("gate.{}", e)] = golden_case::randn(g, 64, 256, 0.0625);
                   m[fmt::format("up.{}", e)] = golden_case::randn(g, 64, 256, 0.0625);
                   m[fmt::format("down.{}", e)] = golden_case::randn(g, 256, 64, 0.125);
                 }
                 return m;
               },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() {
                   std::vector<ref::ExpertMats<S>> ex;
                   for (int e = 0; e < 8; ++e)
                     ex.push_back({m.at(fmt::format("gate.{}", e)).template cast<S>(),
                                   m.at(fmt::format("up.{}", e)).template cast<S>(),
                                   m.at(fmt::format("down.{}", e)).template cast<S>()});
                   std::vector<const ref::ExpertMats<S>*> ptr;
                   for (auto& e : ex) ptr.push_back(&e);
                   ref::Routes<S> r{m.at("expert").cast<int32_t>(), golden_case::in<S>(m, "weight")};
                   return TensorMap{{"y", golden_case::out(ref::moe_experts(golden_case::in<S>(m, "x"), r, ptr))}};
                 };
                 return golden_case::dispatch(p, f);
               }});
  return v;
}

}  // namespace

OpDef moe_experts_with_cases(OpDef d) {
  d.cases = cases;
  d.tolerance = kTolerance;
  d.goldens = goldens();
  return d;
}

}  // namespace hl::gpu
