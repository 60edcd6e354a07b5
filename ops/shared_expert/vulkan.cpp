// shared_expert on Vulkan: vulkan:fused, the sigmoid gate (shared_expert_gate.comp), then the routed experts'
// kernels as a one-expert route: moe_experts' per-token SwiGLU pair for decode, route_pack's grouped GEMM for
// prompt chunks (ops/moe_experts/); vulkan:fused_coopmat, the same with that GEMM on cooperative matrices
// (route_pack_coopmat's), which vulkan:fused hands prompt chunks to where the device has them.
#include "ops/moe_experts/route_pack.h"
#include "ops/moe_experts/swiglu.h"

namespace hl::gpu {

namespace {

void fused(VariantCtx& c, OpArgs& a, bool coopmat) {
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
    if (coopmat && !route_pack::coopmat_takes(gw, uw, dw))
      fail("shared_expert vulkan:fused_coopmat: the coopmat GEMM does not take these weights (width {} / {})", gw.cols, dw.cols);
    const route_pack::Packed p = route_pack::pack(d, expert, 1, coopmat ? route_pack::cm_tile_rows(d) : 0);
    a.set("y", route_pack::scatter(d, route_pack::grouped_swiglu(c, p, x, gw, uw, dw, coopmat), weight));
    return;
  }
  a.set("y", swiglu_experts(c, "shared_expert", "shared_expert.fused", x, expert, weight, a.weight("gate"), a.weight("up"),
                            a.weight("down"), 1));
}

// Whether the coopmat GEMM runs this prompt chunk: enough tokens, weights it takes, real cooperative matrices (the
// emulated ones only by name).
bool coopmat_chunk(const Device& d, const OpArgs& a) {
  return a.in("x").rows() >= int64_t(d.tune("shared_expert.fused.gemm_tokens")) &&
         route_pack::coopmat_takes(a.weight("gate"), a.weight("up"), a.weight("down"));
}

}  // namespace

void register_shared_expert_vulkan(Registry& r) {
  Variant v = vulkan_variant("shared_expert", "vulkan:fused", "sigmoid gate, then the moe_experts kernels as a one-expert route",
                             [](VariantCtx& c, OpArgs& a) { fused(c, a, false); }, true);
  v.delegate = [](VariantCtx& c, const OpArgs& a) -> std::string {
    const Device& d = c.device();
    const bool cm = d.tune("shared_expert.fused.coopmat") && coopmat_chunk(d, a) &&
                    d.tune(std::string(route_pack::kCmTune) + "cm_emulate") == 0 && route_pack::coopmat_unavailable(d).empty();
    return cm ? "vulkan:fused_coopmat" : "";
  };
  // Weight rows per subgroup pass of the per-token kernels; from this many tokens on, route_pack's grouped GEMM;
  // coopmat: prompt chunks to vulkan:fused_coopmat where the device has cooperative matrices.
  v.tunables = {{"shared_expert.fused.rows", 8}, {"shared_expert.fused.gemm_tokens", 2}, {"shared_expert.fused.coopmat", 1}};
  r.add_variant(std::move(v));
  Variant cm = vulkan_variant("shared_expert", "vulkan:fused_coopmat",
                              "vulkan:fused with prompt chunks on route_pack_coopmat's GEMM (f16 inputs, f32 accumulation; "
                              "tiles: moe_experts.route_pack_coopmat.*)",
                              [](VariantCtx& c, OpArgs& a) { fused(c, a, true); }, false, false, route_pack::coopmat_unavailable);
  cm.cooperative_matrices = true;
  cm.precision_tolerance = route_pack::kCoopmatTolerance;
  cm.status = "experimental";
  // Decode and weights the coopmat GEMM does not take: vulkan:fused's kernels.
  cm.delegate = [](VariantCtx& c, const OpArgs& a) -> std::string { return coopmat_chunk(c.device(), a) ? "" : "vulkan:fused"; };
  r.add_variant(std::move(cm));
}

}  // namespace hl::gpu
