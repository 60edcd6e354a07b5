// add_rmsnorm_moe_block on Vulkan: vulkan:fused_decode, moe_block's three dispatches with the first built as
// moe_block_x_norm.comp: every workgroup stages rmsnorm(x + a) * gain in shared memory, each token's first workgroup
// writes x + a and the normed row, which steps 2 and 3 read (ops/moe_block/moe_block_x.glsl, MB_NORM).
#include "ops/moe_block/fused.h"

namespace hl::gpu {

OpArgs add_rmsnorm_moe_block_block(const OpArgs& a, const Tensor& x);  // op.cpp

namespace {

void fused_decode(VariantCtx& c, OpArgs& a) {
  OpArgs block = add_rmsnorm_moe_block_block(a, a.in("x"));
  HeadAddNorm head{a.in("a"), c.weights->device(a.weight("gain")), float(a.param("eps")), {}};
  a.set("y", moe_block_fused(c, block, &head));
  a.set("s", head.s);
}

}  // namespace

void register_add_rmsnorm_moe_block_vulkan(Registry& r) {
  Variant v = vulkan_variant("add_rmsnorm_moe_block", "vulkan:fused_decode",
                             "decode: moe_block's three dispatches (its tunables), the first staging (x + a) * gain in every "
                             "workgroup, 1/rms applied per row, and writing x + a and the normed row for the other two",
                             fused_decode, /*family_default=*/true);
  v.status = "default";
  v.precision_tolerance = kX16Tolerance;  // moe_block's gate/up with x as 16-bit fixed point (moe_block.fused_decode.x16)
  r.add_variant(std::move(v));
}

}  // namespace hl::gpu
