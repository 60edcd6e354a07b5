// attention_prep's parts composed (slice q | gate, rmsnorm and rope of q and k), each by the named variant: the reference
// variant runs the parts' references, vulkan:unfused their Vulkan variants (op.cpp).
#pragma once
#include "ops/registry.h"

namespace hl::gpu {

void attention_prep_parts(VariantCtx& c, OpArgs& a, const char* slice, const char* rmsnorm, const char* rope);

}  // namespace hl::gpu
