// matmul: the model's projection shapes for n = 1 (decode mat-vec) to 512 (prefill) columns, with f32
// weights and with the GGUF's quantized weights read as blocks (q4_K projections, q6_K qkv and lm_head: vulkan:auto
// routes them to qmatvec_direct or qmatvec_planar / qcols; qcols swept over max_cols; qmatvec, qmatvec_i8 and
// qmatvec_i8_staged beside them, the last two with x rounded to 8 bits; q6_K also qmatvec_planar(_i8) on planar
// rows). Bytes: the weight once (f32: 4 per value; quantized: its real block bytes) plus x and y; flops 2 n in out.
// Small n is memory bound (the weight stream), large n compute bound. QUICK (CPU devices): the same shapes
// scaled down 8x, n <= 40.
#include "experiments/harness.h"
#include "model/quant_source.h"

namespace hl::exp {

namespace {

// The op's variants that take f32 weights (the quantized ones refuse them).
std::vector<std::string> f32_variants(const std::string& op) {
  std::vector<std::string> v;
  for (auto* x : gpu::Registry::get().variants(op))
    if (!x->quantized_weights_only) v.push_back(x->name);
  return v;
}

std::vector<Part> parts(const Context& cx) {
  struct Shape {
    const char* name;
    int64_t in, out;
    const char* op;
    quant::Type quant;  // the type of this weight in the Q4_K_M GGUF
    bool f32 = true;    // also the f32 cases of the shape
  };
  // qkv twice: the Q4_K_M recipe gives attn_qkv / attn_v Q6_K in half the layers (SPEC section 9).
  std::vector<Shape> shapes{{"qkv", 2048, 8192, "matmul", quant::Type::Q4_K},
                            {"qkv", 2048, 8192, "matmul", quant::Type::Q6_K, false},
                            {"z", 2048, 4096, "matmul", quant::Type::Q4_K},
                            {"out", 4096, 2048, "matmul", quant::Type::Q4_K},
                            {"expert", 2048, 512, "matmul", quant::Type::Q4_K},
                            {"lm_head", 2048, 248320, "lm_head", quant::Type::Q6_K}};
  const std::vector<int64_t> ns = cx.quick ? std::vector<int64_t>{1, 8, 40} : std::vector<int64_t>{1, 8, 40, 128, 512};
  std::vector<Part> out;
  for (auto& s : shapes) {
    const int64_t in = cx.quick ? s.in / 8 : s.in, o = cx.quick ? std::min<int64_t>(s.out / 8, 8192) : s.out;
    // f32 weights; then quantized: decode widths (qmatvec beside qcols) and prompt widths (qcols).
    Part f32{s.op}, dec{s.op}, pre{s.op};
    f32.variants = f32_variants(s.op);
    dec.variants = {"reference",         "vulkan:auto",       "vulkan:qmatvec",          "vulkan:qmatvec_direct",
                    "vulkan:qmatvec_i8", "vulkan:qmatvec_i8_staged", "vulkan:qcols"};
    if (s.quant == quant::Type::Q6_K)  // planar rows: q6_K only
      for (const char* v : {"vulkan:qmatvec_planar", "vulkan:qmatvec_planar_i8"}) dec.variants.push_back(v);
    pre.variants = {"reference", "vulkan:auto", "vulkan:qcols"};
    dec.sweeps = pre.sweeps = {{std::string(s.op) + ".qcols.max_cols", {1, 8, 16, 32, 40, 64}}};
    dec.sweeps[std::string(s.op) + ".qmatvec.rows"] = {2, 4, 8, 16};  // rows staged per workgroup (occupancy)
    dec.sweeps[std::string(s.op) + ".qmatvec.pass"] = {1, 2, 4};  // rows a subgroup decodes per load of x
    dec.sweeps[std::string(s.op) + ".qmatvec_direct.rows"] = {1, 2, 4, 8};  // rows per subgroup pass
    dec.sweeps[std::string(s.op) + ".qmatvec_direct.units"] = {1, 2, 4};    // units per lane per step
    dec.sweeps[std::string(s.op) + ".qmatvec_i8.slots"] = {1, 2, 4};  // 64-value slots per lane per step
    dec.sweeps[std::string(s.op) + ".qmatvec_i8_staged.rows"] = {1, 2, 4};  // rows per tile
    dec.sweeps[std::string(s.op) + ".qmatvec_i8_staged.groups"] = {1056, 2112};  // grid
    dec.sweeps[std::string(s.op) + ".qmatvec_i8_staged.local"] = {0, 1};  // workers: workgroups or subgroups
    dec.sweeps[std::string(s.op) + ".qmatvec_i8_staged.wg"] = {128, 256};
    for (const char* v : {".qmatvec_planar.", ".qmatvec_planar_i8."}) {
      dec.sweeps[s.op + std::string(v) + "rows"] = {1, 2, 4};  // row groups per subgroup pass
      dec.sweeps[s.op + std::string(v) + "wg"] = {128, 256};
      dec.sweeps[s.op + std::string(v) + "groups"] = {0, 1056, 2112, 4224, 8448};  // grid (0: a pass per subgroup)
    }
    const double wq = double(quant::row_bytes(s.quant, in)) * double(o);
    for (int64_t n : ns) {
      Case c;
      c.label = fmt::format("{} {}->{} n={}", s.name, in, o, n);
      c.shape = {{"n", double(n)}, {"in", double(in)}, {"out", double(o)}};
      c.cost = {4.0 * double(in * o + n * in + n * o), 2.0 * double(n * in * o)};
      c.inputs = [=](std::mt19937_64& g) {
        return gpu::OpArgs{{{"x", Tensor::from(randn(g, n, in))}}, {{"w", random_weight(g, "w", o, in, 1 / std::sqrt(double(in)))}}, {}};
      };
      if (s.f32) f32.cases.push_back(c);
      c.label = fmt::format("{} {} {}->{} n={}", s.name, quant::type_name(s.quant), in, o, n);
      c.cost.bytes = wq + 4.0 * double(n * in + n * o);
      c.inputs = [=, t = s.quant](std::mt19937_64& g) {
        WeightRef w = whole(random_quantized_source("w", o, in, t, g(), float(1 / std::sqrt(double(in)))));
        return gpu::OpArgs{{{"x", Tensor::from(randn(g, n, in))}}, {{"w", w}}, {}};
      };
      (n <= 8 ? dec : pre).cases.push_back(c);
    }
    // f32 dot products of 2048-4096 terms, summed in another order than Eigen's GEMM: ~1e-6; 1e-5 leaves room.
    // The quantized kernels sum the same dequantized values (bit-exact blocks) in another order: the same.
    for (Part* p : {&f32, &dec, &pre}) {
      p->tolerance = 1e-5;
      if (!p->cases.empty()) out.push_back(*p);
    }
  }
  return out;
}

}  // namespace

Experiment matmul_experiment() {
  return {"matmul",
          "dense projections (2048->8192, ->4096, 4096->2048, 2048->512, lm_head) for n = 1..512 columns, f32 and "
          "quantized (q4_K, q6_K qkv and lm_head) weights",
          parts, {}};
}

}  // namespace hl::exp
