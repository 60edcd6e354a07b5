// moe_block: its cases, at test, quick and full scale (inputs, shapes, the bytes and flops each must move and
// compute), which its tests and the moe experiment run.
#include "ops/cases.h"

namespace hl::gpu {

namespace {

// moe_block's cases: a whole MoE block, router to output, for decode (T = 1) and a few tokens: f32 router [E, H]
// and gate_w, the GGUF's types for the rest (q4_K gate/up, q6_K down, as Q4_K_M stores them) or all f32. Bytes:
// the router, the shared expert and each routed expert the tokens reach (at most T k of them; counted as T k,
// distinct for random data at T = 1), x read and y written. Flops 2 E H + 6 (k + 1) F H per token.
Case block_case(int64_t T, int64_t E, int64_t k, int64_t F, int64_t Fs, int64_t H, bool quantized) {
  Case c;
  c.label = fmt::format("{}T={}{}", quantized ? "q4_K " : "", T,
                        E == 256 ? "" : fmt::format(" top-{} of {} experts of {}, shared {}, hidden {}", k, E, F, Fs, H));
  c.group = quantized ? "q4_K" : "f32";
  c.shape = {{"T", double(T)}, {"experts", double(E)}, {"k", double(k)}, {"width", double(F)}, {"hidden", double(H)}};
  const auto mlp_bytes = [&](int64_t w) {
    return quantized ? double(2 * quant::row_bytes(quant::Type::Q4_K, H) * w + quant::row_bytes(quant::Type::Q6_K, w) * H)
                     : 4.0 * 3 * double(w * H);
  };
  const double used = double(std::min(E, T * k));
  c.cost = {4.0 * double(E * H + H) + used * mlp_bytes(F) + mlp_bytes(Fs) + 8.0 * double(T * H),
            double(T) * (2.0 * double(E * H) + 6.0 * double((k + 1) * F * H))};
  c.inputs = [=](std::mt19937_64& g) {
    auto wt = [&](const char* name, int64_t rows, int64_t cols, quant::Type t) {
      return quantized ? random_quantized(g, name, rows, cols, t, 1 / std::sqrt(double(cols)))
                       : random_weight(g, name, rows, cols, 1 / std::sqrt(double(cols)));
    };
    return OpArgs{{{"x", Tensor::from(randn(g, T, H))}},
                  {{"router", random_weight(g, "router", E, H, 1 / std::sqrt(double(H)))},
                   {"gate", wt("gate", E * F, H, quant::Type::Q4_K)},
                   {"up", wt("up", E * F, H, quant::Type::Q4_K)},
                   {"down", wt("down", E * H, F, quant::Type::Q6_K)},
                   {"sgate", wt("sgate", Fs, H, quant::Type::Q4_K)},
                   {"sup", wt("sup", Fs, H, quant::Type::Q4_K)},
                   {"sdown", wt("sdown", H, Fs, quant::Type::Q6_K)},
                   {"gate_w", weight("gate_w", randn(g, 1, H, 1 / std::sqrt(double(H))))}},
                  {{"k", double(k)}, {"n_experts", double(E)}}};
  };
  return c;
}

std::vector<Case> cases(Scale s) {
  std::vector<Case> v;
  if (s == Scale::Test) {
    for (int64_t T : {1, 3}) v.push_back(block_case(T, 16, 4, 64, 96, 128, false));
    v.push_back(block_case(1, 64, 8, 256, 256, 256, true));  // whole 256-value blocks in every row
    v.push_back(block_case(2, 8, 2, 256, 512, 512, true));
    return v;
  }
  const bool quick = s == Scale::Quick;
  const int64_t E = quick ? 32 : 256, F = quick ? 256 : 512, H = quick ? 256 : 2048;
  for (int64_t T : quick ? std::vector<int64_t>{1, 4} : std::vector<int64_t>{1, 4, 16}) v.push_back(block_case(T, E, 8, F, F, H, true));
  v.push_back(block_case(1, E, 8, F, F, H, false));
  return v;
}
// Dot products of up to 2048 terms in another order than the reference's, the routed and shared sums added in
// another order; the routes must be the same (a flipped expert would show as an O(1) error).
constexpr double kTolerance = 1e-5;

}  // namespace

OpDef moe_block_with_cases(OpDef d) {
  d.cases = cases;
  d.tolerance = kTolerance;
  return d;
}

}  // namespace hl::gpu
