// embed on Vulkan: vulkan:gather, a workgroup per token copies its table row (embed.comp).
#include "ops/vulkan_variant.h"

namespace hl::gpu {

namespace {

void gather(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const Tensor& tok = a.in("tokens");
  const Tensor table = c.weights->device(a.weight("table"));
  if (tok.type() != Tensor::Type::I32 || tok.rows() != 1) fail("embed: tokens must be i32 [1, T]");
  check_binding(d, table, "embed", "the table");
  struct {
    uint32_t T, H, V;
  } pc{u32(tok.cols()), u32(table.cols()), u32(table.rows())};
  Tensor y = output_tensor(d, a, "y", pc.T, pc.H);
  const auto& p = d.pipeline("embed", {{0, d.tune("embed.gather.wg")}}, 3, sizeof pc);
  const Grid g = grid(pc.T);
  d.dispatch(p, {tok.buffer(d), table.buffer(d), y.buffer_mut(d)}, pc, g.x, g.y);
  a.set("y", y);
}

}  // namespace

void register_embed_vulkan(Registry& r) {
  r.add_variant(vulkan_variant("embed", "vulkan:gather", "a workgroup per token copies its table row", gather, true));
}

}  // namespace hl::gpu
