// ssm_gates (vulkan:elementwise): per (token, value head): beta = sigmoid(b), g = A * softplus(a + dt_bias).
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer B { float b[]; };
layout(std430, binding = 1) readonly buffer Apre { float a[]; };
layout(std430, binding = 2) readonly buffer Aw { float A[]; };
layout(std430, binding = 3) readonly buffer Dt { float dt_bias[]; };
layout(std430, binding = 4) writeonly buffer Beta { float beta[]; };
layout(std430, binding = 5) writeonly buffer G { float g[]; };
layout(push_constant) uniform Push { uint n, nv; } pc;  // n = T * nv

// log(1 + e) for e in [0, 1] as 2 atanh(s), s = e / (2 + e) <= 1/3: an odd series in s that needs no
// log(), whose accuracy the Vulkan spec leaves loose near 1 (absolute, not relative, error bound).
float log1p01(float e) {
  const float s = e / (2.0 + e), s2 = s * s;
  float p = 1.0 / 17.0;
  for (int n = 15; n >= 1; n -= 2) p = p * s2 + 1.0 / float(n);
  return 2.0 * s * p;  // truncation error < s^18 / 19, far below f32 rounding
}

// torch's softplus (threshold 20), as max(x, 0) + log1p(exp(-|x|)): exact to rounding on both sides.
float softplus(float x) { return x > 20.0 ? x : max(x, 0.0) + log1p01(exp(-abs(x))); }

void main() {
  const uint i = hl_group_index() * WG + gl_LocalInvocationID.x;
  if (i >= pc.n) return;
  const uint h = i % pc.nv;
  beta[i] = 1.0 / (1.0 + exp(-b[i]));
  g[i] = A[h] * softplus(a[i] + dt_bias[h]);
}
