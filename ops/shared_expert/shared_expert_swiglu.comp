// shared_expert vulkan:dense_coopmat, between its GEMMs: h = silu(g) * u * sigma_t, the token's sigmoid gate folded
// into h (down is linear: down(sigma h) = sigma down(h)). g and u each the sum of KS slices of n values (the splits of K
// of the gate/up GEMMs; 1: the products themselves), u's slices uoff values into U. KS and the values per invocation
// (PER, WG apart) are specialization constants: every slice's loads in flight together.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const uint KS = 1;
layout(constant_id = 2) const uint PER = 4;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer G { float g[]; };     // [KS, T, F] slices of x gate^T
layout(std430, binding = 1) readonly buffer U { float u[]; };     // [KS, T, F] slices of x up^T, from uoff
layout(std430, binding = 2) readonly buffer S { float sig[]; };   // [T] sigma(x . gate_w)
layout(std430, binding = 3) writeonly buffer H { float h[]; };    // [T, F]
layout(push_constant) uniform Push { uint n, F, uoff; } pc;       // n = T F

void main() {
  const uint base = hl_group_index() * WG * PER + gl_LocalInvocationID.x;
  float gv[KS * PER], uv[KS * PER], sv[PER];
  for (uint j = 0u; j < PER; ++j) {
    const uint i = base + j * WG;
    const bool in_range = i < pc.n;
    for (uint k = 0u; k < KS; ++k) {
      gv[k * PER + j] = in_range ? g[k * pc.n + i] : 0.0;
      uv[k * PER + j] = in_range ? u[pc.uoff + k * pc.n + i] : 0.0;
    }
    sv[j] = in_range ? sig[i / pc.F] : 0.0;
  }
  for (uint j = 0u; j < PER; ++j) {
    const uint i = base + j * WG;
    float a = gv[j], b = uv[j];
    for (uint k = 1u; k < KS; ++k) a += gv[k * PER + j], b += uv[k * PER + j];  // in slice order
    if (i < pc.n) h[i] = a / (1.0 + exp(-a)) * b * sv[j];
  }
}
