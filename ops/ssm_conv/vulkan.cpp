// ssm_conv on Vulkan: vulkan:channel, an invocation per (channel, token block) walks the tokens with its
// window in registers (ssm_conv.comp).
#include "ops/vulkan_variant.h"

namespace hl::gpu {

namespace {

void channel(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const Tensor& x = a.in("x");
  const Tensor w = c.weights->device(a.weight("w"));
  Tensor& state = a.state("state");
  const int64_t T = x.rows(), C = x.cols(), K = w.cols();
  if (w.rows() != C || K < 2 || state.rows() != K - 1 || state.cols() != C)
    fail("ssm_conv: x [{}, {}], w [{}, {}], state [{}, {}] are inconsistent", T, C, w.rows(), K, state.rows(), state.cols());
  Tensor y = Tensor::device(d, T, C);
  const struct {
    uint32_t T, C;
  } pc{u32(T), u32(C)};
  // Workgroups: x over channels, y over blocks of `tokens` tokens (at least K-1: see ssm_conv.comp).
  const uint32_t wg = d.tune("ssm_conv.channel.wg"), tb = std::max(d.tune("ssm_conv.channel.tokens"), u32(K - 1));
  const uint64_t gx = (uint64_t(C) + wg - 1) / wg, gy = (uint64_t(T) + tb - 1) / tb;
  if (gx > d.info().max_workgroup_count[0] || gy > d.info().max_workgroup_count[1])
    fail("ssm_conv: {} channels x {} tokens need {} x {} workgroups, more than the device allows", C, T, gx, gy);
  const auto& p = d.pipeline("ssm_conv", {{0, wg}, {1, u32(K)}, {2, tb}}, 4, sizeof pc);
  d.dispatch(p, {x.buffer(d), w.buffer(d), state.buffer_mut(d), y.buffer_mut(d)}, pc, uint32_t(gx), uint32_t(gy));
  a.set("y", y);
}

}  // namespace

void register_ssm_conv_vulkan(Registry& r) {
  Variant v = vulkan_variant("ssm_conv", "vulkan:channel",
                             "an invocation per (channel, 16 tokens) walks them with its window in registers", channel, true);
  v.tunables = {{"ssm_conv.channel.tokens", 16}};  // tokens per invocation's sliding window
  r.add_variant(std::move(v));
}

}  // namespace hl::gpu
