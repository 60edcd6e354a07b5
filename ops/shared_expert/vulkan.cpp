// shared_expert on Vulkan: vulkan:fused, the sigmoid gate (shared_expert_gate.comp), then the routed experts'
// kernels as a one-expert route: moe_experts' per-token SwiGLU pair for decode, route_pack's grouped GEMM for
// prompt chunks (ops/moe_experts/).
#include "ops/moe_experts/route_pack.h"
#include "ops/moe_experts/swiglu.h"

namespace hl::gpu {

namespace {

void fused(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const Tensor& x = a.in("x");
  const Tensor gate_w = c.weights->device(a.weight("gate_w"));
  if (gate_w.numel() != x.cols()) fail("shared_expert: gate_w has {} values for {} columns", gate_w.numel(), x.cols());
  struct {
    uint32_t T, H;
  } pc{u32(x.rows()), u32(x.cols())};
  Tensor expert = Tensor::device(d, pc.T, 1, Tensor::Type::I32), weight = Tensor::device(d, pc.T, 1);
  const auto& p = d.pipeline("shared_expert_gate", {{0, d.tune("shared_expert.fused.wg")}}, 4, sizeof pc);
  const Grid g = grid(pc.T);
  d.dispatch(p, {x.buffer(d), gate_w.buffer(d), expert.buffer_mut(d), weight.buffer_mut(d)}, pc, g.x, g.y);
  // A prompt chunk: every token routes to the one expert, so route_pack's grouped GEMM makes it a tiled GEMM
  // (each weight tile serves a tile of tokens); the per-token kernels re-read the weights for every token. On
  // cooperative matrices where the device has them (as moe_experts' route_pack_coopmat, tunable .coopmat).
  if (pc.T >= d.tune("shared_expert.fused.gemm_tokens")) {
    const WeightRef &gw = a.weight("gate"), &uw = a.weight("up"), &dw = a.weight("down");
    const bool cm = d.tune("shared_expert.fused.coopmat") && route_pack::coopmat_takes(gw, uw, dw) &&
                    route_pack::coopmat_unavailable(d).empty();
    const route_pack::Packed p = route_pack::pack(d, expert, 1, cm ? route_pack::cm_tile_rows(d) : 0);
    a.set("y", route_pack::scatter(d, route_pack::grouped_swiglu(c, p, x, gw, uw, dw, cm), weight));
    return;
  }
  a.set("y", swiglu_experts(c, "shared_expert", "shared_expert.fused", x, expert, weight, a.weight("gate"), a.weight("up"),
                            a.weight("down"), 1));
}

}  // namespace

void register_shared_expert_vulkan(Registry& r) {
  Variant v = vulkan_variant("shared_expert", "vulkan:fused", "sigmoid gate, then the moe_experts kernels as a one-expert route",
                             fused, true);
  // Weight rows per subgroup pass of the per-token kernels; from this many tokens on, route_pack's grouped GEMM.
  // coopmat: prompt chunks on route_pack_coopmat's GEMM where the device has cooperative matrices (its tiles and
  // emulation switch: moe_experts.route_pack_coopmat.*).
  v.tunables = {{"shared_expert.fused.rows", 8}, {"shared_expert.fused.gemm_tokens", 2}, {"shared_expert.fused.coopmat", 1}};
  r.add_variant(std::move(v));
}

}  // namespace hl::gpu
