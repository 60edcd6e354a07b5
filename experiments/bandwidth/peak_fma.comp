// bandwidth experiment, compute ceiling: ITERS rounds of 8 independent f32 FMA chains per invocation
// (16 flops per round), nearly no memory traffic.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
#include "common.glsl"

layout(std430, binding = 0) writeonly buffer Dst { float dst[]; };
layout(push_constant) uniform Push { uint iters; float a, b; } pc;

void main() {
  const uint i = hl_group_index() * WG + gl_LocalInvocationID.x;
  float x0 = float(i) * 1e-9, x1 = x0 + 1.0, x2 = x0 + 2.0, x3 = x0 + 3.0, x4 = x0 + 4.0, x5 = x0 + 5.0, x6 = x0 + 6.0,
        x7 = x0 + 7.0;
  for (uint k = 0u; k < pc.iters; ++k) {
    x0 = fma(x0, pc.a, pc.b); x1 = fma(x1, pc.a, pc.b); x2 = fma(x2, pc.a, pc.b); x3 = fma(x3, pc.a, pc.b);
    x4 = fma(x4, pc.a, pc.b); x5 = fma(x5, pc.a, pc.b); x6 = fma(x6, pc.a, pc.b); x7 = fma(x7, pc.a, pc.b);
  }
  dst[i] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}
