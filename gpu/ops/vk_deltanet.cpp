// Vulkan variants of ssm_conv, l2norm, ssm_gates, ssm_scan, gated_rmsnorm.
#include "gpu/ops/vk_op.h"

namespace hl::gpu {

void register_vk_deltanet(Registry& r) {}

}  // namespace hl::gpu
