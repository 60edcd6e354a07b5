// moe_block_add_rmsnorm on Vulkan: vulkan:fused_decode, moe_block's fused_decode whose third dispatch also adds the
// residual and writes the norm (its last workgroup: ops/moe_block/moe_block_down_tail.comp).
#include "ops/moe_block/fused.h"

namespace hl::gpu {

namespace {

void fused_decode(VariantCtx& c, OpArgs& a) {
  OpArgs block{{{"x", a.in("x")}}, a.w, a.p};
  TailAddNorm tail{a.in("res"), c.weights->device(a.weight("gain")), float(a.param("eps")), {}, {}};
  moe_block_fused(c, block, &tail);
  a.set("y", tail.s);
  a.set("n", tail.n);
}

}  // namespace

void register_moe_block_add_rmsnorm_vulkan(Registry& r) {
  Variant v = vulkan_variant("moe_block_add_rmsnorm", "vulkan:fused_decode",
                             "moe_block's three dispatches (its tunables), the third's last workgroup adding the residual "
                             "and writing the norm",
                             fused_decode);
  v.precision_tolerance = kX16Tolerance;  // moe_block's gate/up with x as 16-bit fixed point (moe_block.fused_decode.x16)
  r.add_variant(std::move(v));
}

}  // namespace hl::gpu
