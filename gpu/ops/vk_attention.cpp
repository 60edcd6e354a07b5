// Vulkan variants of slice, rope, attention.
#include "gpu/ops/vk_op.h"

namespace hl::gpu {

void register_vk_attention(Registry& r) {}

}  // namespace hl::gpu
