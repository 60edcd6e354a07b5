// shared_expert: its cases, at test, quick and full scale (inputs, shapes, the bytes and flops each must move and compute),
// which its tests and experiment run, and its golden case.
#include "ops/cases.h"
#include "ops/shared_expert/reference.h"

namespace hl::gpu {

namespace {

// shared_expert's cases: the sigmoid-gated SwiGLU expert every token goes through (width 512, hidden 2048), for
// T = 1..512, f32 weights, and at full shapes also the GGUF's block types at T = 1 and 512. Bytes: its three weights and the gate vector once, x read, y written; flops 6 F H per token.
Case shared_case(int64_t T, int64_t F, int64_t H, bool quantized) {
  Case c;
  c.label = fmt::format("{}T={}{}", quantized ? "q4_K " : "", T, H == 2048 ? "" : fmt::format(" {} x {}", F, H));
  c.group = quantized ? "q4_K" : "f32";
  c.shape = {{"T", double(T)}, {"hidden", double(H)}, {"width", double(F)}};
  const double wbytes = quantized ? double(2 * quant::row_bytes(quant::Type::Q4_K, H) * F + quant::row_bytes(quant::Type::Q6_K, F) * H)
                                  : 4.0 * 3 * double(F * H);
  c.cost = {wbytes + 4.0 * double(H + 2 * T * H), 6.0 * double(T * F * H)};
  c.inputs = [=](std::mt19937_64& g) {
    auto wt = [&](const char* name, int64_t rows, int64_t cols, quant::Type t) {
      return quantized ? random_quantized(g, name, rows, cols, t, 1 / std::sqrt(double(cols)))
                       : weight(name, randn(g, rows, cols, 1 / std::sqrt(double(cols))));
    };
    return OpArgs{{{"x", Tensor::from(randn(g, T, H))}},
                  {{"gate", wt("sgate", F, H, quant::Type::Q4_K)},
                   {"up", wt("sup", F, H, quant::Type::Q4_K)},
                   {"down", wt("sdown", H, F, quant::Type::Q6_K)},
                   {"gate_w", weight("sgw", randn(g, 1, H, 1 / std::sqrt(double(H))))}},
                  {}};
  };
  return c;
}

std::vector<Case> cases(Scale s) {
  std::vector<Case> v;
  if (s == Scale::Test) {
    for (int64_t T : {1, 4}) v.push_back(shared_case(T, 64, 256, false));
    v.push_back(shared_case(1, 512, 2048, false));
    v.push_back(shared_case(3, 256, 256, true));
    return v;
  }
  const bool quick = s == Scale::Quick;
  for (int64_t T : quick ? std::vector<int64_t>{1, 8, 64} : std::vector<int64_t>{1, 8, 64, 512})
    v.push_back(shared_case(T, quick ? 64 : 512, quick ? 256 : 2048, false));
  if (!quick)  // the GGUF's types (q4_K gate and up, q6_K down), as the model runs them: decode and a prompt chunk
    for (int64_t T : {1, 512}) v.push_back(shared_case(T, 512, 2048, true));
  return v;
}
constexpr double kTolerance = 1e-5;

// Its golden case (golden/ops/): inputs drawn with the slot's seed, the oracle's outputs in f32 and f64.
std::vector<OpCase> goldens() {
  std::vector<OpCase> v;
  v.push_back({"shared_expert", 13, "x [4, 256]; width 64; sigmoid gate",
               [](auto& g) {
                 return TensorMap{{"x", golden_case::randn(g, 4, 256)}, {"gate", golden_case::randn(g, 64, 256, 0.0625)},
                                  {"up", golden_case::randn(g, 64, 256, 0.0625)}, {"down", golden_case::randn(g, 256, 64, 0.125)},
                                  {"gate_w", golden_case::randn(g, 1, 256, 0.0625)}};
               },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() {
                   ref::ExpertMats<S> e{golden_case::in<S>(m, "gate"), golden_case::in<S>(m, "up"), golden_case::in<S>(m, "down")};
                   return TensorMap{{"y", golden_case::out(ref::shared_expert(golden_case::in<S>(m, "x"), e, golden_case::in_vec<S>(m, "gate_w")))}};
                 };
                 return golden_case::dispatch(p, f);
               }});
  return v;
}

}  // namespace

OpDef shared_expert_with_cases(OpDef d) {
  d.cases = cases;
  d.tolerance = kTolerance;
  d.goldens = goldens();
  return d;
}

}  // namespace hl::gpu
