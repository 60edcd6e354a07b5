// matmul_add_rmsnorm: its cases, at test, quick and full scale (inputs, shapes, the bytes and flops each must move and
// compute), which its tests and the matmul experiment run.
#include "ops/cases.h"

namespace hl::gpu {

namespace {

// A projection K -> N of T tokens (q4_K as Q4_K_M stores the layers' output projections, or f32) with the residual
// [T, N] and a gain around 1. Bytes: the weight, h, x and both outputs; flops: the product's 2 K N per token.
Case fold_case(const std::string& name, int64_t T, int64_t K, int64_t N, bool quantized) {
  Case c;
  c.label = fmt::format("{} {}{}->{} n={}", name, quantized ? "q4_K " : "", K, N, T);
  c.group = quantized ? "q4_K" : "f32";
  c.shape = {{"T", double(T)}, {"in", double(K)}, {"out", double(N)}};
  const double wbytes = quantized ? double(quant::row_bytes(quant::Type::Q4_K, K) * N) : 4.0 * double(K * N);
  c.cost = {wbytes + 4.0 * double(T * (K + 3 * N) + N), 2.0 * double(T * K * N)};
  c.inputs = [=](std::mt19937_64& g) {
    const double std = 1 / std::sqrt(double(K));
    return OpArgs{{{"h", Tensor::from(randn(g, T, K))}, {"x", Tensor::from(randn(g, T, N))}},
                  {{"w", quantized ? random_quantized(g, "w", N, K, quant::Type::Q4_K, std) : random_weight(g, "w", N, K, std)},
                   {"gain", weight("gain", randn(g, 1, N, 0.2, 1.0))}},
                  {{"eps", 1e-6}}};
  };
  return c;
}

std::vector<Case> cases(Scale s) {
  std::vector<Case> v;
  if (s == Scale::Test) {
    v.push_back(fold_case("out", 1, 512, 256, true));
    v.push_back(fold_case("out", 1, 96, 200, false));  // a width no workgroup size divides
    v.push_back(fold_case("out", 3, 256, 128, true));  // a few tokens: one norm per row
    return v;
  }
  const bool quick = s == Scale::Quick;
  v.push_back(fold_case("out", 1, quick ? 1024 : 4096, quick ? 512 : 2048, true));  // the layers' output projections
  v.push_back(fold_case("out", 1, quick ? 1024 : 4096, quick ? 512 : 2048, false));
  return v;
}

// The projection's dot products in another order than the reference's (matmul's 1e-5 for K up to 4096), then a norm
// that scales by the row's RMS: relative errors carry over.
constexpr double kTolerance = 1e-5;

}  // namespace

OpDef matmul_add_rmsnorm_with_cases(OpDef d) {
  d.cases = cases;
  d.tolerance = kTolerance;
  return d;
}

}  // namespace hl::gpu
