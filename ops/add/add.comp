// add (vulkan:elementwise): y = a + b over n elements.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push { uint n; } pc;

void main() {
  const uint i = hl_group_index() * WG + gl_LocalInvocationID.x;
  if (i < pc.n) y[i] = a[i] + b[i];
}
