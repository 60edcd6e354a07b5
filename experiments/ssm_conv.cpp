// ssm_conv: the GDN causal depthwise conv (8192 channels, kernel 4) with a carried state, + silu.
// Bytes: x read, y written, taps and the state read and written; ~2K + 4 flops per output: memory bound.
#include "experiments/harness.h"

namespace hl::exp {

namespace {

std::vector<Part> parts(const Context& cx) {
  const int64_t C = 8192, K = 4;
  Part p{"ssm_conv"};
  for (int64_t T : cx.quick ? std::vector<int64_t>{1, 64} : std::vector<int64_t>{1, 64, 512, 4096}) {
    Case c;
    c.label = fmt::format("T={}", T);
    c.shape = {{"T", double(T)}, {"channels", double(C)}, {"kernel", double(K)}};
    c.cost = {4.0 * double(2 * T * C + C * K + 2 * (K - 1) * C), double(T * C * (2 * K + 4))};
    c.inputs = [=](std::mt19937_64& g) {
      return gpu::OpArgs{{{"x", Tensor::from(randn(g, T, C))}, {"state", Tensor::from(randn(g, K - 1, C))}},
                         {{"w", weight("conv", randn(g, C, K, 0.3))}}, {}};
    };
    p.cases.push_back(c);
  }
  p.tolerance = 1e-6;  // four f32 products and a silu per output
  return {p};
}

}  // namespace

Experiment ssm_conv_experiment() {
  return {"ssm_conv", "GDN causal depthwise conv, 8192 channels, kernel 4, carried state, T = 1..4096", parts, {}};
}

}  // namespace hl::exp
