// Every op of hybridlab, registered once, in the order the forward pass meets them. Each op registers its
// signature and variants from its folder (ops/<op>/op.cpp); the Halide variants come from ops/halide/.
#include "ops/registry.h"

namespace hl::gpu {

void register_embed(Registry& r);
void register_rmsnorm(Registry& r);
void register_add_rmsnorm(Registry& r);
void register_matmul(Registry& r);  // matmul and lm_head
void register_matmul_group(Registry& r);  // composite: projections of one input
void register_add_rmsnorm_matmul_group(Registry& r);  // composite, decode: the add + norm in front of the projections
void register_add(Registry& r);
void register_slice(Registry& r);
void register_rope(Registry& r);
void register_attention(Registry& r);
void register_attention_decode(Registry& r);  // composite: slices, q/k norms, rope and attention of one decode token
void register_attention_prep(Registry& r);  // composite: a prompt chunk's slices, q/k norms and ropes
void register_ssm_conv(Registry& r);
void register_l2norm(Registry& r);
void register_ssm_gates(Registry& r);
void register_gdn_prep(Registry& r);
void register_ssm_scan(Registry& r);
void register_gated_rmsnorm(Registry& r);
void register_gdn_output(Registry& r);  // composite: the scan and the gated norm
void register_gdn_decode(Registry& r);  // composite, decode: gdn_prep and gdn_output in one
void register_rms_scaled_matmul(Registry& r);  // decode: a per-head 1 / rms in front of a mat-vec (the GDN output projection)
void register_moe_router(Registry& r);
void register_moe_experts(Registry& r);
void register_shared_expert(Registry& r);
void register_moe_block(Registry& r);  // composite: router, routes, routed and shared experts
void register_add_rmsnorm_moe_block(Registry& r);  // composite, decode: the add + norm in front of the MoE block
void register_halide_variants(Registry& r);  // halide:*, halide-vulkan:* (ops/halide/; none without HYBRIDLAB_HALIDE)

const Registry& Registry::get() {
  static const Registry r = [] {
    Registry r;
    for (auto* reg : {register_embed, register_rmsnorm, register_add_rmsnorm, register_matmul, register_matmul_group, register_add_rmsnorm_matmul_group, register_add, register_slice,
                      register_rope, register_attention, register_attention_prep, register_attention_decode, register_ssm_conv, register_l2norm, register_ssm_gates,
                      register_gdn_prep, register_ssm_scan, register_gated_rmsnorm, register_gdn_output, register_gdn_decode, register_rms_scaled_matmul,
                      register_moe_router,
                      register_moe_experts, register_shared_expert, register_moe_block, register_add_rmsnorm_moe_block})
      reg(r);
    register_halide_variants(r);
    return r;
  }();
  return r;
}

}  // namespace hl::gpu
