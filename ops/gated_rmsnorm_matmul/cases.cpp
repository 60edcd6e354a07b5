// gated_rmsnorm_matmul: its cases, at test, quick and full scale (inputs, shapes, the bytes and flops each must move and
// compute), which its tests and the matmul experiment run.
#include "ops/cases.h"

namespace hl::gpu {

namespace {

// The scan's output o and the gate z [T, nv * dv] (unit scale), a gain [dv] near 1 and the output projection
// [out, nv * dv] of type t. Bytes: the weight's blocks, o, z, the gain and y; flops: the products and the norm's ~8 per value.
Case gated_case(const std::string& group, int64_t T, int64_t nv, int64_t dv, int64_t out, quant::Type t) {
  const int64_t K = nv * dv;
  Case c;
  c.label = fmt::format("T={} {} heads of {} -> {} {}", T, nv, dv, out, quant::type_name(t));
  c.group = group;
  c.shape = {{"T", double(T)}, {"in", double(K)}, {"out", double(out)}, {"d_v", double(dv)}};
  c.cost = {double(quant::row_bytes(t, K)) * double(out) + 4.0 * double(2 * T * K + dv + T * out),
            2.0 * double(T * K * out) + 8.0 * double(T * K)};
  c.inputs = [=](std::mt19937_64& g) {
    const double std = 1 / std::sqrt(double(K));
    return OpArgs{{{"o", Tensor::from(randn(g, T, K))}, {"z", Tensor::from(randn(g, T, K))}},
                  {{"gain", weight("gain", randn(g, 1, dv, 0.2, 1.0))},
                   {"w", t == quant::Type::F32 ? random_weight(g, "w", out, K, std) : random_quantized(g, "w", out, K, t, std)}},
                  {{"eps", 1e-6}}};
  };
  return c;
}

std::vector<Case> cases(Scale s) {
  using quant::Type;
  std::vector<Case> v;
  if (s == Scale::Test) {  // every block type at the narrowest head its units allow, partial passes, two tokens
    v.push_back(gated_case("test", 1, 4, 128, 40, Type::Q4_K));
    v.push_back(gated_case("test", 2, 2, 128, 33, Type::Q6_K));
    v.push_back(gated_case("test", 1, 8, 64, 17, Type::Q5_K));
    v.push_back(gated_case("test", 2, 3, 32, 9, Type::Q8_0));
    v.push_back(gated_case("test", 1, 5, 32, 6, Type::F16));
    v.push_back(gated_case("test", 1, 2, 96, 5, Type::F32));
    return v;
  }
  // The Gated DeltaNet's output projection at decode (Q6_K in some layers of the Q4_K_M recipe). Quick: 8x fewer heads.
  const int64_t nv = s == Scale::Quick ? 4 : 32, out = s == Scale::Quick ? 256 : 2048;
  for (Type t : {Type::Q4_K, Type::Q6_K}) v.push_back(gated_case("gated deltanet decode", 1, nv, 128, out, t));
  return v;
}

// The norm (1e-6) then dot products of up to 4096 terms in another order than the reference's (f32 throughout).
constexpr double kTolerance = 1e-5;

}  // namespace

OpDef gated_rmsnorm_matmul_with_cases(OpDef d) {
  d.cases = cases;
  d.tolerance = kTolerance;
  return d;
}

}  // namespace hl::gpu
