// rms_scaled_matmul: a mat-vec whose input is scaled per head by 1 / rms from given partial sums of squares, y = (x_h /
// sqrt(sum_p sumsq[h, p] / d + eps)) w^T for each head h of d = in / heads columns. In decode it follows a gdn_decode that
// applied the gate and left the norm's 1 / rms out (its blocks' sums of squares beside its output): the Gated DeltaNet's
// output projection with its gated norm finished in front. A composite op in the plan's sense (part: matmul): with its
// reference variant the forward pass runs the plain projection and gdn_decode keeps the norm (README.md).
#include "ops/registry.h"

namespace hl::gpu {

OpDef rms_scaled_matmul_with_cases(OpDef d);  // cases.cpp: its cases and tolerance
void register_rms_scaled_matmul_vulkan(Registry& r);  // vulkan.cpp

// x with each head's row scaled by its 1 / rms: sumsq [T, heads * parts], heads of x.cols() / heads columns.
Mat<float> rms_scaled_rows(const Mat<float>& x, const Mat<float>& sumsq, int64_t parts, double eps) {
  if (parts <= 0 || sumsq.rows() != x.rows() || sumsq.cols() % parts || sumsq.cols() == 0 || x.cols() % (sumsq.cols() / parts))
    fail("rms_scaled_matmul: sums of squares [{}, {}] in {} parts per head do not fit x [{}, {}]", sumsq.rows(), sumsq.cols(),
         parts, x.rows(), x.cols());
  const int64_t heads = sumsq.cols() / parts, d = x.cols() / heads;
  Mat<float> y = x;
  for (int64_t t = 0; t < x.rows(); ++t)
    for (int64_t h = 0; h < heads; ++h) {
      double ss = 0;
      for (int64_t p = 0; p < parts; ++p) ss += sumsq(t, h * parts + p);
      y.row(t).segment(h * d, d) *= float(1.0 / std::sqrt(ss / double(d) + eps));
    }
  return y;
}

void register_rms_scaled_matmul(Registry& r) {
  r.add_op(rms_scaled_matmul_with_cases(
      {"rms_scaled_matmul",
       "x [T, heads*d], sumsq [T, heads*parts], w [out, heads*d] -> y = (x_h / sqrt(sum_p sumsq[h, p] / d + eps)) w^T "
       "[T, out]",
       {"x", "sumsq"}, {"w"}, {}, {"y"}, {"parts", "eps"}, /*live=*/false,
       // What the forward pass runs with the reference variant in the plan: the plain projection (matmul), the norm then
       // kept in gdn_decode's step; so that plan still captures and replays decode.
       /*parts=*/{"matmul"}}));
  // The rows scaled on the host, then matmul's reference variant.
  r.add_variant(reference_variant("rms_scaled_matmul", "the oracle: the rows scaled on the host, then matmul's reference, f32",
                                  [](VariantCtx& c, OpArgs& a) {
    const Mat<float> xs = rms_scaled_rows(a.in("x").f32(), a.in("sumsq").f32(), a.iparam("parts"), a.param("eps"));
    OpArgs m{{{"x", Tensor::from(xs)}}, {{"w", a.weight("w")}}, {}};
    Registry::get().variant("matmul", "reference").run(c, m);
    a.set("y", m.t.at("y"));
  }));
  register_rms_scaled_matmul_vulkan(r);
}

}  // namespace hl::gpu
