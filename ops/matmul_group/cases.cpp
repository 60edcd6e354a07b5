// matmul_group: its cases, at test, quick and full scale (inputs, shapes, the bytes and flops each must move and
// compute), which its tests and experiment run.
#include "ops/cases.h"

namespace hl::gpu {

namespace {

struct Proj {
  const char* name;
  int64_t out;
  quant::Type type;
};

// x [T, in] and one weight per projection, of its type. Bytes: every weight once (its real block bytes), x and
// the outputs; flops 2 T in sum(out).
Case group_case(const std::string& label, const std::string& group, int64_t T, int64_t in, const std::vector<Proj>& ps) {
  Case c;
  int64_t outs = 0;
  double wbytes = 0;
  std::string parts;
  for (const Proj& p : ps) {
    outs += p.out;
    wbytes += double(quant::row_bytes(p.type, in)) * double(p.out);
    parts += fmt::format("{}{} {} {}", parts.empty() ? "" : ", ", p.name, quant::type_name(p.type), p.out);
  }
  c.label = fmt::format("{} T={} {}->({})", label, T, in, parts);
  c.group = group;
  c.shape = {{"T", double(T)}, {"in", double(in)}, {"out", double(outs)}};
  c.cost = {wbytes + 4.0 * double(T * in + T * outs), 2.0 * double(T * in * outs)};
  c.inputs = [=](std::mt19937_64& g) {
    OpArgs a{{{"x", Tensor::from(randn(g, T, in))}}, {}, {}};
    for (size_t i = 0; i < ps.size(); ++i) {
      const std::string n = fmt::format("w{}", i);
      a.w.emplace(n, ps[i].type == quant::Type::F32 ? random_weight(g, n, ps[i].out, in, 1 / std::sqrt(double(in)))
                                                    : random_quantized(g, n, ps[i].out, in, ps[i].type, 1 / std::sqrt(double(in))));
    }
    return a;
  };
  return c;
}

std::vector<Case> cases(Scale s) {
  using quant::Type;
  std::vector<Case> v;
  if (s == Scale::Test) {  // every block type, row counts that leave partial passes, 2 to 4 weights, T > 1
    v.push_back(group_case("mixed", "test", 1, 256, {{"a", 72, Type::Q6_K}, {"b", 40, Type::Q4_K}, {"c", 3, Type::Q8_0}, {"d", 5, Type::F32}}));
    v.push_back(group_case("mixed", "test", 2, 512, {{"a", 64, Type::Q4_K}, {"b", 33, Type::Q5_K}, {"c", 17, Type::F16}}));
    v.push_back(group_case("pair", "test", 1, 256, {{"a", 31, Type::Q4_K}, {"b", 1, Type::Q4_K}}));
    return v;
  }
  // The model's groups at decode: the Gated DeltaNet's qkv (Q6_K in some layers of the Q4_K_M recipe), b, a, z; the
  // attention's q (with its gate columns), k, v (Q6_K in some layers). Quick: widths scaled down 8x.
  const int64_t f = s == Scale::Quick ? 8 : 1, H = 2048 / f;
  for (Type qkv : {Type::Q4_K, Type::Q6_K})
    v.push_back(group_case("gdn", "gated deltanet decode", 1, H,
                           {{"qkv", 8192 / f, qkv}, {"b", 32 / f, Type::Q4_K}, {"a", 32 / f, Type::Q4_K}, {"z", 4096 / f, Type::Q4_K}}));
  for (Type vt : {Type::Q4_K, Type::Q6_K})
    v.push_back(group_case("attention", "attention decode", 1, H, {{"q", 8192 / f, Type::Q4_K}, {"k", 512 / f, Type::Q4_K}, {"v", 512 / f, vt}}));
  return v;
}

// Dot products of up to 2048 terms in another order than the reference's (f32 accumulation throughout).
constexpr double kTolerance = 1e-5;

}  // namespace

OpDef matmul_group_with_cases(OpDef d) {
  d.cases = cases;
  d.tolerance = kTolerance;
  return d;
}

}  // namespace hl::gpu
