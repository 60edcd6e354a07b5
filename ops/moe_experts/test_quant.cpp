// moe_experts and shared_expert on quantized (ggml block) experts against the reference, on fresh random inputs. The
// weights are quantized_source()s: the kernels decode the raw blocks, the reference reads the dequantized
// rows (bit-exact dequantizers, reference/quant/blocks.cpp), so both compute the oracle's function of the
// same f32 weights.
// Tolerances: what remains is f32 summation in another order than Eigen's. qcols dequantizes bit-exactly and
// sums up to 2048 products per output (in 64-term partial sums); qmatvec and the expert kernels factor each
// 16-value run's scale out (mul * sum(q x) - sub * sum(x)), which rounds differently again but at the same
// level (both terms are of the size of the result: sub centres q). Rounding ~ sqrt(n) * 6e-8 per dot,
// independent across outputs: measured at most 4.5e-7 relative L2 for matmul (any type, K up to 4096), so
// 1e-6; the experts chain three such products through silu and apply the router weight before down (as the
// f32 kernels do, test.cpp): measured at most 6.3e-7, so 2e-6 as for f32 experts.
#include "model/quant_source.h"
#include "variant_check.h"

using namespace hl;
using namespace hl::test;
using quant::Type;

namespace {

WeightRef qweight(const std::string& name, const Mat<float>& m, Type t) { return whole(quantized_source(name, m, t)); }

Tensor ids(const std::vector<int32_t>& v, int64_t rows, int64_t cols) {
  IMat m(rows, cols);
  std::copy(v.begin(), v.end(), m.data());
  return Tensor::from_i32(std::move(m));
}

constexpr double kExpertTol = 2e-6;

}  // namespace

TEST_CASE("vk ops: moe_experts and shared_expert on quantized experts", "[vk][ops][quant]") {
  std::mt19937_64 g(26);
  // (gate, up, down) types: the GGUF mix (q4_K, q6_K down), different gate and up types, and f32 down beside
  // quantized gate/up (read as raw f32 rows).
  const std::vector<std::array<Type, 3>> mixes{
      {Type::Q4_K, Type::Q4_K, Type::Q6_K}, {Type::Q5_K, Type::Q8_0, Type::F16}, {Type::Q4_K, Type::Q4_K, Type::F32}};
  auto w = [&](const std::string& name, int64_t r, int64_t c, Type t) {
    Mat<float> m = randn(g, r, c, 1.0 / std::sqrt(double(c)));
    return t == Type::F32 ? weight(name, std::move(m)) : qweight(name, m, t);
  };
  const int E = 8, k = 2, H = 256, F = 256;
  for (auto& mix : mixes)
    for (int T : {1, 5}) {
      INFO(quant::type_name(mix[0]) << "/" << quant::type_name(mix[1]) << "/" << quant::type_name(mix[2]) << " T " << T);
      // Expert 0 is in every token's route, expert E-1 in none.
      std::vector<int32_t> route;
      for (int t = 0; t < T; ++t) route.insert(route.end(), {0, int32_t(1 + g() % uint64_t(E - 2))});
      Mat<float> rw = randn(g, T, k).cwiseAbs();
      rw = (rw.array().colwise() / rw.rowwise().sum().array()).matrix();
      gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, H))}, {"expert", ids(route, T, k)}, {"weight", Tensor::from(rw)}},
                    {{"gate", w("gate", E * F, H, mix[0])}, {"up", w("up", E * F, H, mix[1])}, {"down", w("down", E * H, F, mix[2])}},
                    {{"n_experts", E}}};
      require_close("moe_experts", "vulkan:per_token", a, kExpertTol);
      gpu::OpArgs s{{{"x", a.in("x")}},
                    {{"gate", w("sgate", F, H, mix[0])}, {"up", w("sup", F, H, mix[1])}, {"down", w("sdown", H, F, mix[2])},
                     {"gate_w", weight("gate_w", randn(g, 1, H, 1.0 / std::sqrt(H)))}},
                    {}};
      require_close("shared_expert", "vulkan:fused", s, kExpertTol);
    }
  // The model's widths (H = 2048, F = 512), four experts, one token.
  gpu::OpArgs a{{{"x", Tensor::from(randn(g, 1, 2048))}, {"expert", ids({3, 1}, 1, 2)}, {"weight", Tensor::from(Mat<float>{{0.7f, 0.3f}})}},
                {{"gate", w("gate", 4 * 512, 2048, Type::Q4_K)}, {"up", w("up", 4 * 512, 2048, Type::Q4_K)},
                 {"down", w("down", 4 * 2048, 512, Type::Q6_K)}},
                {{"n_experts", 4}}};
  require_close("moe_experts", "vulkan:per_token", a, kExpertTol);
}
