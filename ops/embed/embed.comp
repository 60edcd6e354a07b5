// embed (vulkan:gather): y[t, :] = table[tokens[t], :]. One workgroup per token, invocations stride the row
// (coalesced copy). Ids outside [0, V) are clamped so a bad id can never read outside the table (the host
// validates ids before they reach the device).
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Tok { int tokens[]; };
layout(std430, binding = 1) readonly buffer Table { float table[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push { uint T, H, V; } pc;

void main() {
  const uint t = hl_group_index();
  if (t >= pc.T) return;
  const uint id = uint(clamp(tokens[t], 0, int(pc.V) - 1));
  for (uint h = gl_LocalInvocationID.x; h < pc.H; h += WG) y[t * pc.H + h] = table[id * pc.H + h];
}
