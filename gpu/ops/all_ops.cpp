// Every op and variant of hybridlab, registered once. Adding a variant: write its kernel file
// (gpu/ops/vk_<op>.cpp + gpu/shaders/<kernel>.comp) and add its registration call here.
#include "gpu/ops/vk_op.h"

namespace hl::gpu {

const Registry& Registry::get() {
  static const Registry r = [] {
    Registry r;
    register_ops(r);
    register_reference_variants(r);
    register_vk_elementwise(r);
    register_vk_norms(r);
    register_vk_matmul(r);
    register_vk_attention(r);
    register_vk_deltanet(r);
    register_vk_gdn_prep(r);
    register_vk_moe(r);
    register_vk_quant(r);
    register_vk_ssm_chunked(r);
    register_vk_route_pack(r);
    register_vk_attention_tiled(r);
    register_vk_attention_coopmat(r);
    register_halide_variants(r);
    return r;
  }();
  return r;
}

}  // namespace hl::gpu
