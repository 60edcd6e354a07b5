// The per-token SwiGLU expert kernels (moe_gate_up, moe_down and their _q forms), shared by moe_experts'
// vulkan:per_token and shared_expert's vulkan:fused (ops/moe_experts/vulkan.cpp).
#pragma once
#include "ops/vulkan_variant.h"

namespace hl::gpu {

// y [T, H] = sum over slots j of down_e(weight[t, j] * silu(gate_e x_t) * up_e x_t), e = expert[t, j], with
// experts stacked in gate, up [E*F, H] and down [E*H, F]. `tune` prefixes the tunables ("<op>.<variant>").
Tensor swiglu_experts(VariantCtx& c, const std::string& op, const std::string& tune, const Tensor& x, const Tensor& expert,
                      const Tensor& weight, const WeightRef& gate, const WeightRef& up, const WeightRef& down, int64_t E);

}  // namespace hl::gpu
