// moe_router on Vulkan: vulkan:softmax_topk, a workgroup per token, the softmax in shared memory and k
// workgroup argmax rounds (moe_router.comp); vulkan:subgroup_topk, a subgroup per token (moe_router_subgroup.comp).
#include "ops/vulkan_variant.h"

namespace hl::gpu {

namespace {

// Both kernels: logits [T, E] in, expert (i32) and weight [T, k] out, the same bindings and push constants; `pipeline`
// with the call's push constants gives the kernel and its workgroup count.
struct RouterPush {
  uint32_t T, E, k;
};
void route(VariantCtx& c, OpArgs& a,
           const std::function<std::pair<const vk::Pipeline*, uint32_t>(Device&, const RouterPush&)>& pipeline) {
  Device& d = c.device();
  const Tensor& logits = a.in("logits");
  const RouterPush pc{u32(logits.rows()), u32(logits.cols()), u32(a.iparam("k"))};
  if (pc.k < 1 || pc.k > pc.E) fail("moe_router: top-{} of {} experts", pc.k, pc.E);
  const auto [p, groups] = pipeline(d, pc);
  Tensor expert = Tensor::device(d, pc.T, pc.k, Tensor::Type::I32), weight = Tensor::device(d, pc.T, pc.k);
  const Grid g = grid(groups);
  d.dispatch(*p, {logits.buffer(d), expert.buffer_mut(d), weight.buffer_mut(d)}, pc, g.x, g.y);
  a.set("expert", expert);
  a.set("weight", weight);
}

// A workgroup per token (moe_router.comp).
void softmax_topk(VariantCtx& c, OpArgs& a) {
  route(c, a, [](Device& d, const RouterPush& pc) {
    const uint32_t size = d.tune("moe_router.softmax_topk.wg");
    // p[E], two per-subgroup partials per invocation, hl_workgroup_sum's partials, a few scalars.
    const uint64_t shared = 4ull * (pc.E + 3ull * size + 4);
    if (shared > d.info().max_shared_memory)
      fail("moe_router: {} experts need {} bytes of shared memory, this device has {}", pc.E, shared,
           d.info().max_shared_memory);
    return std::pair{&d.pipeline("moe_router", {{0, size}, {1, pc.E}}, 3, sizeof pc), pc.T};
  });
}

// A subgroup per token (moe_router_subgroup.comp): the workgroups are sized for the largest subgroup size the device
// may run (the fewest tokens per workgroup), so that every token has a subgroup whatever size runs.
void subgroup_topk(VariantCtx& c, OpArgs& a) {
  route(c, a, [](Device& d, const RouterPush& pc) {
    const uint32_t sg = d.info().max_subgroup_size, wg = std::max(d.tune("moe_router.subgroup_topk.wg"), sg);
    if (wg % sg || wg > d.info().max_workgroup_invocations)
      fail("moe_router: moe_router.subgroup_topk.wg = {} must be a multiple of the subgroup size {} and at most {}", wg, sg,
           d.info().max_workgroup_invocations);
    const auto& p = d.pipeline("moe_router_subgroup", {{0, wg}, {1, pc.E}, {2, d.info().min_subgroup_size}}, 3, sizeof pc);
    return std::pair{&p, (pc.T + wg / sg - 1) / (wg / sg)};
  });
}

}  // namespace

void register_moe_router_vulkan(Registry& r) {
  Variant wg = vulkan_variant("moe_router", "vulkan:softmax_topk",
                              "a workgroup per token: softmax in shared memory, k workgroup argmax rounds", softmax_topk);
  wg.status = "baseline";
  r.add_variant(std::move(wg));
  Variant sg = vulkan_variant("moe_router", "vulkan:subgroup_topk",
                              "a subgroup per token: logits in registers, k rounds of two subgroup reductions, no barriers",
                              subgroup_topk, true);
  sg.tunables = {{"moe_router.subgroup_topk.wg", 128}};
  r.add_variant(std::move(sg));
}

}  // namespace hl::gpu
