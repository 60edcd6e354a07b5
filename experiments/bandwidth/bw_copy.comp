// bandwidth experiment: copy n vec4s (grid-strided): n * 16 bytes read and as many written.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Src { vec4 src[]; };
layout(std430, binding = 1) writeonly buffer Dst { vec4 dst[]; };
layout(push_constant) uniform Push { uint n, groups; } pc;

void main() {
  for (uint i = hl_group_index() * WG + gl_LocalInvocationID.x; i < pc.n; i += pc.groups * WG) dst[i] = src[i];
}
