// shared_expert vulkan:dense_coopmat, between its GEMMs: h = silu(g) * u * sigma_t, the token's sigmoid gate folded
// into h (down is linear: down(sigma h) = sigma down(h)). g and u each the sum of ks slices of n values (the splits of K
// of the gate/up GEMMs; 1: the products themselves), u's slices uoff values into U. One invocation per value.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer G { float g[]; };     // [ks, T, F] slices of x gate^T
layout(std430, binding = 1) readonly buffer U { float u[]; };     // [ks, T, F] slices of x up^T, from uoff
layout(std430, binding = 2) readonly buffer S { float sig[]; };   // [T] sigma(x . gate_w)
layout(std430, binding = 3) writeonly buffer H { float h[]; };    // [T, F]
layout(push_constant) uniform Push { uint n, F, ks, uoff; } pc;   // n = T F

void main() {
  const uint i = hl_group_index() * WG + gl_LocalInvocationID.x;
  if (i >= pc.n) return;
  float a = g[i], b = u[pc.uoff + i];
  for (uint k = 1u; k < pc.ks; ++k) a += g[k * pc.n + i], b += u[pc.uoff + k * pc.n + i];  // in slice order
  h[i] = a / (1.0 + exp(-a)) * b * sig[i / pc.F];
}
