// Vulkan variants: attention with flash-style tiles of queries (prefill) and split-KV decode.
#include "gpu/ops/vk_op.h"

namespace hl::gpu {

void register_vk_attention_tiled(Registry& r) {}

}  // namespace hl::gpu
