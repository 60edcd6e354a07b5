// Quantized weights read as ggml blocks on the device (ops/matmul/vulkan_quant.cpp), for every variant that
// decodes blocks in its kernels (matmul, lm_head, moe_experts, shared_expert).
#pragma once
#include "ops/vulkan_variant.h"

namespace hl::gpu {

// Whether the shaders (ops/shaders/quant_blocks.glsl) decode this weight's storage type.
bool vk_quant_decodes(const WeightRef& w);
// Its raw rows on the device, checked: a decodable type, whole 32-value units per row, offsets within 32 bits,
// bindable as one storage buffer.
Tensor vk_quant_rows(VariantCtx& c, const WeightRef& w, const std::string& what);

}  // namespace hl::gpu
