// shared_expert vulkan:dense_coopmat, between its GEMMs: h = silu(g) * u * sigma_t, the token's sigmoid gate folded
// into h (down is linear: down(sigma h) = sigma down(h)). One invocation per value.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer G { float g[]; };     // [T, F] x gate^T
layout(std430, binding = 1) readonly buffer U { float u[]; };     // [T, F] x up^T
layout(std430, binding = 2) readonly buffer S { float sig[]; };   // [T] sigma(x . gate_w)
layout(std430, binding = 3) writeonly buffer H { float h[]; };    // [T, F]
layout(push_constant) uniform Push { uint n, F; } pc;             // n = T F

void main() {
  const uint i = hl_group_index() * WG + gl_LocalInvocationID.x;
  if (i >= pc.n) return;
  const float a = g[i];
  h[i] = a / (1.0 + exp(-a)) * u[i] * sig[i / pc.F];
}
