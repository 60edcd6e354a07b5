// matmul: the model's projection shapes for n = 1 (decode mat-vec) to 512 (prefill) columns, f32
// weights. Bytes: the weight once plus x and y; flops 2 n in out. Small n is memory bound (the weight
// stream), large n compute bound. QUICK (CPU devices): the same shapes scaled down 8x, n <= 40.
#include "experiments/harness.h"

namespace hl::exp {

namespace {

std::vector<Part> parts(const Context& cx) {
  struct Shape {
    const char* name;
    int64_t in, out;
    const char* op;
  };
  std::vector<Shape> shapes{{"qkv", 2048, 8192, "matmul"}, {"z", 2048, 4096, "matmul"}, {"out", 4096, 2048, "matmul"},
                            {"expert", 2048, 512, "matmul"}, {"lm_head", 2048, 248320, "lm_head"}};
  const std::vector<int64_t> ns = cx.quick ? std::vector<int64_t>{1, 8, 40} : std::vector<int64_t>{1, 8, 40, 128, 512};
  std::vector<Part> out;
  for (auto& s : shapes) {
    Part p{s.op};
    const int64_t in = cx.quick ? s.in / 8 : s.in, o = cx.quick ? std::min<int64_t>(s.out / 8, 8192) : s.out;
    for (int64_t n : ns) {
      Case c;
      c.label = fmt::format("{} {}->{} n={}", s.name, in, o, n);
      c.shape = {{"n", double(n)}, {"in", double(in)}, {"out", double(o)}};
      c.cost = {4.0 * double(in * o + n * in + n * o), 2.0 * double(n * in * o)};
      c.inputs = [=](std::mt19937_64& g) {
        return gpu::OpArgs{{{"x", Tensor::from(randn(g, n, in))}}, {{"w", random_weight(g, "w", o, in, 1 / std::sqrt(double(in)))}}, {}};
      };
      p.cases.push_back(c);
    }
    // f32 dot products of 2048-4096 terms, summed in another order than Eigen's GEMM: ~1e-6; 1e-5 leaves room.
    p.tolerance = 1e-5;
    out.push_back(p);
  }
  return out;
}

}  // namespace

Experiment matmul_experiment() {
  return {"matmul", "dense projections (2048->8192, ->4096, 4096->2048, 2048->512, lm_head) for n = 1..512 columns", parts, {}};
}

}  // namespace hl::exp
