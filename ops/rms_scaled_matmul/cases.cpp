// rms_scaled_matmul: its cases, at test, quick and full scale (inputs, shapes, the bytes and flops each must move and
// compute), which its tests and the matmul_group experiment run.
#include "ops/cases.h"

namespace hl::gpu {

namespace {

// x [T, heads * d] of unit scale, the sums of squares of another random row over each head's `parts` equal column blocks
// (as gdn_decode writes them beside its gated output), the projection [out, heads * d] of type t. Bytes: the weight's
// blocks, x, the sums and y; flops: the products and a multiply per value.
Case scaled_case(const std::string& group, int64_t T, int64_t heads, int64_t d, int64_t parts, int64_t out, quant::Type t) {
  const int64_t K = heads * d;
  Case c;
  c.label = fmt::format("T={} {} heads of {} in {} parts -> {} {}", T, heads, d, parts, out, quant::type_name(t));
  c.group = group;
  c.shape = {{"T", double(T)}, {"in", double(K)}, {"out", double(out)}, {"d", double(d)}, {"parts", double(parts)}};
  c.cost = {double(quant::row_bytes(t, K)) * double(out) + 4.0 * double(T * K + T * heads * parts + T * out),
            2.0 * double(T * K * out) + double(T * K)};
  c.inputs = [=](std::mt19937_64& g) {
    const Mat<float> o = randn(g, T, K);
    Mat<float> ss(T, heads * parts);
    for (int64_t r = 0; r < T; ++r)
      for (int64_t b = 0; b < heads * parts; ++b) ss(r, b) = o.row(r).segment(b * (d / parts), d / parts).squaredNorm();
    const double std = 1 / std::sqrt(double(K));
    return OpArgs{{{"x", Tensor::from(randn(g, T, K))}, {"sumsq", Tensor::from(ss)}},
                  {{"w", t == quant::Type::F32 ? random_weight(g, "w", out, K, std) : random_quantized(g, "w", out, K, t, std)}},
                  {{"parts", double(parts)}, {"eps", 1e-6}}};
  };
  return c;
}

std::vector<Case> cases(Scale s) {
  using quant::Type;
  std::vector<Case> v;
  if (s == Scale::Test) {  // every block type at the narrowest head its units allow, 1 to 4 parts, partial passes, two tokens
    v.push_back(scaled_case("test", 1, 4, 128, 4, 40, Type::Q4_K));
    v.push_back(scaled_case("test", 2, 2, 128, 1, 33, Type::Q6_K));
    v.push_back(scaled_case("test", 1, 8, 64, 2, 17, Type::Q5_K));
    v.push_back(scaled_case("test", 2, 3, 32, 1, 9, Type::Q8_0));
    v.push_back(scaled_case("test", 1, 5, 32, 2, 6, Type::F16));
    v.push_back(scaled_case("test", 1, 2, 96, 3, 5, Type::F32));
    return v;
  }
  // The Gated DeltaNet's output projection at decode (Q6_K in some layers of the Q4_K_M recipe), after gdn_decode's 4
  // blocks per head. Quick: 8x fewer heads.
  const int64_t heads = s == Scale::Quick ? 4 : 32, out = s == Scale::Quick ? 256 : 2048;
  for (Type t : {Type::Q4_K, Type::Q6_K}) v.push_back(scaled_case("gated deltanet decode", 1, heads, 128, 4, out, t));
  return v;
}

// The heads' factors (1e-7) then dot products of up to 4096 terms in another order than the reference's (f32 throughout).
constexpr double kTolerance = 1e-5;

}  // namespace

OpDef rms_scaled_matmul_with_cases(OpDef d) {
  d.cases = cases;
  d.tolerance = kTolerance;
  return d;
}

}  // namespace hl::gpu
