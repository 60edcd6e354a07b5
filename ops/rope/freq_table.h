// The rotary frequencies of rope (vulkan:neox) and the fused decode attention (attention_decode vulkan:fused_decode),
// on the device: for i < R / 2, inv_freq_i = theta^(-2i / R) in turns per position as a 64-bit fixed-point fraction
// (inv_freq_i / (2 pi) * 2^64, formed in double like the reference's angles), as (low, high) 32-bit words:
// ops/shaders/rope_angle.glsl turns a position and one of them into an angle. Uploaded once per (theta, R).
#pragma once
#include "ops/vulkan_variant.h"

namespace hl::gpu {

Tensor rope_freq_table(VariantCtx& c, double theta, int64_t R);

}  // namespace hl::gpu
