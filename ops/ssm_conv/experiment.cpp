// ssm_conv: the GDN causal depthwise conv (8192 channels, kernel 4) with a carried state, + silu.
// Bytes: x read, y written, taps and the state read and written; ~2K + 4 flops per output: memory bound.
// gdn_prep: the whole step from the projections to the scan's inputs (conv + silu, split, L2 norms of the
// 16 + 16 key heads, gates of the 32 value heads), vulkan:fused beside vulkan:unfused (the separate ops'
// kernels in turn, as the unfused forward runs them). Bytes: what one pass must move, x, b, a, taps, A,
// dt_bias read, the state read and written, q, k, v, beta, g written; the unfused sequence moves more (u
// written and read back by the slices, q and k again by the norms) but is measured against the same bytes.
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

  const int64_t nk = 16, dk = 128, nv = 32;
  Part prep{"gdn_prep"};
  for (int64_t T : cx.quick ? std::vector<int64_t>{1, 64} : std::vector<int64_t>{1, 64, 512, 4096}) {
    Case c;
    c.label = fmt::format("T={}", T);
    c.shape = {{"T", double(T)}, {"channels", double(C)}, {"kernel", double(K)}, {"value_heads", double(nv)}};
    // The conv and silu as above, 3 flops per q and k value for the norms (square, add, scale), ~20 per gate pair.
    c.cost = {4.0 * double(2 * T * C + 4 * T * nv + C * K + 2 * nv + 2 * (K - 1) * C),
              double(T * C * (2 * K + 4) + T * 2 * nk * dk * 3 + T * nv * 20)};
    c.inputs = [=](std::mt19937_64& g) {
      return gpu::OpArgs{{{"x", Tensor::from(randn(g, T, C))},
                          {"b", Tensor::from(randn(g, T, nv, 4.0))},
                          {"a", Tensor::from(randn(g, T, nv, 4.0))},
                          {"state", Tensor::from(randn(g, K - 1, C))}},
                         {{"w", weight("conv", randn(g, C, K, 0.3))},
                          {"A", weight("A", Mat<float>((-randn(g, 1, nv)).array().exp().matrix()))},
                          {"dt_bias", weight("dt_bias", randn(g, 1, nv))}},
                         {{"n_k_heads", double(nk)}, {"head_dim", double(dk)}, {"scale", 1 / std::sqrt(double(dk))}, {"eps", 1e-6}}};
    };
    prep.cases.push_back(c);
  }
  prep.tolerance = 1e-6;  // the conv's, then one head's sum of squares and the gates' exp/softplus in f32
  // Tokens per workgroup: longer blocks re-read fewer window rows but give fewer workgroups (full runs only).
  if (!cx.quick) prep.sweeps = {{"gdn_prep.fused.tokens", {4, 8, 16, 32}}};
  return {p, prep};
}

}  // namespace

Experiment ssm_conv_experiment() {
  return {"ssm_conv",
          "GDN causal depthwise conv, 8192 channels, kernel 4, carried state, T = 1..4096; and gdn_prep (conv, silu, "
          "split, L2 norms, gates) fused vs the separate ops",
          parts, {}};
}

}  // namespace hl::exp
