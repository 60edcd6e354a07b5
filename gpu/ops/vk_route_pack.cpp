// Vulkan variants: moe_experts by route packing: route capture, expert counts, packing, grouped GEMM, scatter.
#include "gpu/ops/vk_op.h"

namespace hl::gpu {

void register_vk_route_pack(Registry& r) {}

}  // namespace hl::gpu
