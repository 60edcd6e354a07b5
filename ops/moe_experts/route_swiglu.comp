// route_pack_coopmat with split K (moe_experts.route_pack_coopmat.split_k): h = silu(g) * u between the routed
// gate/up and down, g and u each the sum of KS slices of n values (gate/up's K parts, added in slice order), u's
// slices KS n values after g's; h in packed order as f16 pairs (HALF 1, what down reads with half_h) or f32. KS a
// specialization constant: the loops unroll, every slice's loads in flight together.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const uint HALF = 1;
layout(constant_id = 2) const uint KS = 2;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer P { float part[]; };  // [2, KS, rows, F]: g's slices, then u's
layout(std430, binding = 1) writeonly buffer H { uint h[]; };     // [rows, F] f32 bits, or [rows, F / 2] f16 pairs
layout(push_constant) uniform Push { uint n; } pc;                 // n = rows F (even with HALF)

float swiglu(uint i) {
  float g = part[i], u = part[KS * pc.n + i];
  for (uint k = 1u; k < KS; ++k) g += part[k * pc.n + i], u += part[(KS + k) * pc.n + i];
  return g / (1.0 + exp(-g)) * u;  // as the unsplit kernel's epilogue
}

void main() {
  const uint i = hl_group_index() * WG + gl_LocalInvocationID.x;
  if (HALF == 1u) {
    if (2u * i < pc.n) h[i] = packHalf2x16(vec2(swiglu(2u * i), swiglu(2u * i + 1u)));
  } else if (i < pc.n) {
    h[i] = floatBitsToUint(swiglu(i));
  }
}
