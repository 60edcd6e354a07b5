// Vulkan variants: ssm_scan in the chunk-parallel form (SPEC 5).
#include "gpu/ops/vk_op.h"

namespace hl::gpu {

void register_vk_ssm_chunked(Registry& r) {}

}  // namespace hl::gpu
