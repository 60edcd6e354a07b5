// norms: rmsnorm (hidden 2048, and the q/k norm over 16 heads of 256), gated_rmsnorm (32 value heads of
// 128), l2norm (16 key heads of 128) at the model's widths. Each element is read once and written once;
// a few flops per element: memory bound everywhere.
#include "experiments/harness.h"

namespace hl::exp {

namespace {

std::vector<int64_t> rows_for(const Context& cx) {
  return cx.quick ? std::vector<int64_t>{1, 64} : std::vector<int64_t>{1, 64, 512, 4096};
}

Case norm_case(int64_t T, int64_t width, int64_t group, bool gated) {
  Case c;
  c.label = fmt::format("T={}", T);
  c.shape = {{"T", double(T)}, {"width", double(width)}, {"group", double(group)}};
  // x (and z) read, y written, the gain once: 4 bytes each.
  c.cost = {4.0 * double(T * width) * (gated ? 3 : 2) + 4.0 * double(group), double(T * width) * (gated ? 8 : 4)};
  c.inputs = [=](std::mt19937_64& g) {
    gpu::OpArgs a;
    if (gated) {
      a.t = {{"o", Tensor::from(randn(g, T, width))}, {"z", Tensor::from(randn(g, T, width))}};
    } else {
      a.t = {{"x", Tensor::from(randn(g, T, width, 3.0))}};
    }
    a.w = {{"gain", weight("gain", randn(g, 1, group, 0.2, 1.0))}};
    a.p = {{"eps", 1e-6}};
    return a;
  };
  return c;
}

std::vector<Part> parts(const Context& cx) {
  Part rms{"rmsnorm"}, qk{"rmsnorm"}, gated{"gated_rmsnorm"}, l2{"l2norm"};
  for (int64_t T : rows_for(cx)) {
    rms.cases.push_back(norm_case(T, 2048, 2048, false));
    Case q = norm_case(T, 16 * 256, 256, false);
    q.label += " q_norm";
    qk.cases.push_back(q);
    gated.cases.push_back(norm_case(T, 32 * 128, 128, true));
    Case c;
    c.label = fmt::format("T={}", T);
    c.shape = {{"T", double(T)}, {"width", 2048.0}, {"group", 128.0}};
    c.cost = {8.0 * double(T) * 2048, 4.0 * double(T) * 2048};
    c.inputs = [T](std::mt19937_64& g) {
      return gpu::OpArgs{{{"x", Tensor::from(randn(g, T, 2048))}}, {}, {{"head_dim", 128}, {"scale", 1 / std::sqrt(128.0)}, {"eps", 1e-6}}};
    };
    l2.cases.push_back(c);
  }
  // f32 sums of up to 2048 squares in another order than Eigen's: well inside 1e-5 relative L2.
  for (Part* p : {&rms, &qk, &gated, &l2}) p->tolerance = 1e-5;
  return {rms, qk, gated, l2};
}

}  // namespace

Experiment norms_experiment() {
  return {"norms", "rmsnorm, gated_rmsnorm and l2norm at the model's widths (memory bound)", parts, {}};
}

}  // namespace hl::exp
