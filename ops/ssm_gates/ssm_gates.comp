// ssm_gates (vulkan:elementwise): per (token, value head): beta = sigmoid(b), g = A * softplus(a + dt_bias).
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
#include "common.glsl"
#include "softplus.glsl"

layout(std430, binding = 0) readonly buffer B { float b[]; };
layout(std430, binding = 1) readonly buffer Apre { float a[]; };
layout(std430, binding = 2) readonly buffer Aw { float A[]; };
layout(std430, binding = 3) readonly buffer Dt { float dt_bias[]; };
layout(std430, binding = 4) writeonly buffer Beta { float beta[]; };
layout(std430, binding = 5) writeonly buffer G { float g[]; };
layout(push_constant) uniform Push { uint n, nv; } pc;  // n = T * nv

void main() {
  const uint i = hl_group_index() * WG + gl_LocalInvocationID.x;
  if (i >= pc.n) return;
  const uint h = i % pc.nv;
  beta[i] = 1.0 / (1.0 + exp(-b[i]));
  g[i] = A[h] * softplus(a[i] + dt_bias[h]);
}
