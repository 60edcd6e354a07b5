// moe_block (vulkan:fused_decode with steps 2 and x16): moe_block_experts.comp with x as 16-bit fixed point and gate and
// up's K-quant units as integer dot products (ops/shaders/x16.glsl); a K-quant down's too, on w h staged the same way (the
// shared expert's down stays f32).
#version 450
#define MB_DOWN
#define MB_X16
#include "moe_block_gate_up.glsl"
