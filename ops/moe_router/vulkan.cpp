// moe_router on Vulkan: vulkan:softmax_topk, a workgroup per token, the softmax in shared memory and k
// workgroup argmax rounds (moe_router.comp).
#include "ops/vulkan_variant.h"

namespace hl::gpu {

namespace {

void softmax_topk(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const Tensor& logits = a.in("logits");
  struct {
    uint32_t T, E, k;
  } pc{u32(logits.rows()), u32(logits.cols()), u32(a.iparam("k"))};
  if (pc.k < 1 || pc.k > pc.E) fail("moe_router: top-{} of {} experts", pc.k, pc.E);
  const uint32_t size = d.tune("moe_router.softmax_topk.wg");
  // p[E], two per-subgroup partials per invocation, hl_workgroup_sum's partials, a few scalars.
  const uint64_t shared = 4ull * (pc.E + 3ull * size + 4);
  if (shared > d.info().max_shared_memory)
    fail("moe_router: {} experts need {} bytes of shared memory, this device has {}", pc.E, shared,
         d.info().max_shared_memory);
  Tensor expert = Tensor::device(d, pc.T, pc.k, Tensor::Type::I32), weight = Tensor::device(d, pc.T, pc.k);
  const auto& p = d.pipeline("moe_router", {{0, size}, {1, pc.E}}, 3, sizeof pc);
  const Grid g = grid(pc.T);
  d.dispatch(p, {logits.buffer(d), expert.buffer_mut(d), weight.buffer_mut(d)}, pc, g.x, g.y);
  a.set("expert", expert);
  a.set("weight", weight);
}

}  // namespace

void register_moe_router_vulkan(Registry& r) {
  r.add_variant(vulkan_variant("moe_router", "vulkan:softmax_topk",
                               "a workgroup per token: softmax in shared memory, k workgroup argmax rounds", softmax_topk, true));
}

}  // namespace hl::gpu
