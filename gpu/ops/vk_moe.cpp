// Vulkan variants of embed, moe_router, moe_experts, shared_expert.
#include "gpu/ops/vk_op.h"

namespace hl::gpu {

void register_vk_moe(Registry& r) {}

}  // namespace hl::gpu
