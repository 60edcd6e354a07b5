// matmul: its cases, at test, quick and full scale (inputs, shapes, the bytes and flops each must move and compute),
// which its tests and experiment run, and its golden case.
#include "ops/cases.h"
#include "ops/matmul/reference.h"

namespace hl::gpu {

namespace {

// matmul's and lm_head's cases: the model's projection shapes for n = 1 (decode mat-vec) to 512 (a prompt chunk)
// tokens, with f32 weights and with the GGUF's quantized weights read as blocks. Bytes: the weight once (f32: 4
// per value; quantized: its real block bytes) plus x and y; flops 2 n in out. Quick: the shapes scaled down 8x,
// n <= 40. Groups: "<shape> f32", "<shape> <type> decode" (n <= 8), "<shape> <type> prefill".
struct Shape {
  const char* name;
  int64_t in, out;
  const char* op;
  quant::Type quant;  // the type of this weight in the Q4_K_M GGUF
  bool f32 = true;    // also the f32 cases of the shape
};

Case projection(const Shape& s, int64_t in, int64_t o, int64_t n, bool quantized) {
  Case c;
  c.shape = {{"n", double(n)}, {"in", double(in)}, {"out", double(o)}};
  if (!quantized) {
    c.label = fmt::format("{} {}->{} n={}", s.name, in, o, n);
    c.group = fmt::format("{} f32", s.name);
    c.cost = {4.0 * double(in * o + n * in + n * o), 2.0 * double(n * in * o)};
    c.inputs = [=](std::mt19937_64& g) {
      return OpArgs{{{"x", Tensor::from(randn(g, n, in))}}, {{"w", random_weight(g, "w", o, in, 1 / std::sqrt(double(in)))}}, {}};
    };
    return c;
  }
  c.label = fmt::format("{} {} {}->{} n={}", s.name, quant::type_name(s.quant), in, o, n);
  c.group = fmt::format("{} {} {}", s.name, quant::type_name(s.quant), n <= 8 ? "decode" : "prefill");
  c.cost = {double(quant::row_bytes(s.quant, in)) * double(o) + 4.0 * double(n * in + n * o), 2.0 * double(n * in * o)};
  c.inputs = [=, t = s.quant](std::mt19937_64& g) {
    return OpArgs{{{"x", Tensor::from(randn(g, n, in))}}, {{"w", random_quantized(g, "w", o, in, t, 1 / std::sqrt(double(in)))}}, {}};
  };
  return c;
}

std::vector<Case> cases_of(const std::string& op, Scale s) {
  std::vector<Case> v;
  if (s == Scale::Test) {  // odd and small shapes, every block type the kernels decode, decode and prompt widths
    const std::vector<std::tuple<quant::Type, int64_t, int64_t, int64_t>> t{
        {quant::Type::F32, 96, 40, 3},   {quant::Type::F32, 256, 96, 9},  {quant::Type::Q4_K, 256, 64, 1},
        {quant::Type::Q4_K, 512, 64, 9}, {quant::Type::Q6_K, 256, 40, 1}, {quant::Type::Q6_K, 256, 40, 5},
        {quant::Type::Q8_0, 256, 48, 2}, {quant::Type::Q5_K, 256, 32, 1}, {quant::Type::F16, 128, 32, 3}};
    for (auto [type, in, o, n] : t) {
      const Shape sh{"test", in, op == "lm_head" ? o * 25 : o, op.c_str(), type};
      v.push_back(projection(sh, sh.in, sh.out, n, type != quant::Type::F32));
    }
    return v;
  }
  // qkv twice: the Q4_K_M recipe gives attn_qkv / attn_v Q6_K in half the layers (SPEC section 9).
  const std::vector<Shape> shapes{{"qkv", 2048, 8192, "matmul", quant::Type::Q4_K},
                                  {"qkv", 2048, 8192, "matmul", quant::Type::Q6_K, false},
                                  {"z", 2048, 4096, "matmul", quant::Type::Q4_K},
                                  {"out", 4096, 2048, "matmul", quant::Type::Q4_K},
                                  {"expert", 2048, 512, "matmul", quant::Type::Q4_K},
                                  {"down", 512, 2048, "matmul", quant::Type::Q4_K},  // the shared expert's down
                                  {"gates", 2048, 32, "matmul", quant::Type::Q4_K, false},  // linear attention's b, a
                                  {"router", 2048, 256, "matmul", quant::Type::F32},  // f32 in the GGUF: no quantized case
                                  {"lm_head", 2048, 248320, "lm_head", quant::Type::Q6_K}};
  const bool quick = s == Scale::Quick;
  const std::vector<int64_t> ns = quick ? std::vector<int64_t>{1, 8, 40} : std::vector<int64_t>{1, 8, 40, 128, 512};
  for (auto& sh : shapes) {
    if (sh.op != op) continue;
    const int64_t in = quick ? std::max<int64_t>(sh.in / 8, 256) : sh.in,  // a q4_K row is 256 values
                   o = quick ? std::min<int64_t>(sh.out / 8, 8192) : sh.out;
    for (int64_t n : ns) {
      if (sh.f32) v.push_back(projection(sh, in, o, n, false));
      if (sh.quant != quant::Type::F32) v.push_back(projection(sh, in, o, n, true));
    }
  }
  return v;
}
// f32 dot products of 2048-4096 terms, summed in another order than Eigen's GEMM: ~1e-6; 1e-5 leaves room. The
// quantized kernels sum the same dequantized values (bit-exact blocks) in another order: the same.
constexpr double kTolerance = 1e-5;

// Its golden case (golden/ops/): inputs drawn with the slot's seed, the oracle's outputs in f32 and f64.
std::vector<OpCase> goldens() {
  std::vector<OpCase> v;
  v.push_back({"matmul", 2, "x [5, 512], w [384, 512]",
               [](auto& g) { return TensorMap{{"x", golden_case::randn(g, 5, 512)}, {"w", golden_case::randn(g, 384, 512, 0.044)}}; },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() { return TensorMap{{"y", golden_case::out(ref::matmul(golden_case::in<S>(m, "x"), golden_case::in<S>(m, "w")))}}; };
                 return golden_case::dispatch(p, f);
               }});
  return v;
}

}  // namespace

OpDef matmul_with_cases(OpDef d) {
  d.cases = [](Scale s) { return cases_of("matmul", s); };
  d.tolerance = kTolerance;
  d.goldens = goldens();
  return d;
}

OpDef lm_head_with_cases(OpDef d) {
  d.cases = [](Scale s) { return cases_of("lm_head", s); };
  d.tolerance = kTolerance;
  return d;
}

}  // namespace hl::gpu
