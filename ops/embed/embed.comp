// embed (vulkan:gather): y[t, :] = table[tokens[t], :]. One workgroup per token, invocations stride the row
// (coalesced copy). Ids outside [0, V) are clamped so a bad id can never read outside the table (the host
// validates ids before they reach the device).
#version 450
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Tok { int tokens[]; };
layout(std430, binding = 1) readonly buffer Table { float table[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push { uint T, H, V; } pc;

// Values per invocation per round, loaded before any is stored: a round's loads are in flight together (a decode
// step's one row, from a table too large to stay cached, would otherwise wait a memory round trip per value).
const uint U = 16u;

void main() {
  const uint t = hl_group_index();
  if (t >= pc.T) return;
  const uint id = uint(clamp(tokens[t], 0, int(pc.V) - 1));
  for (uint h0 = gl_LocalInvocationID.x; h0 < pc.H; h0 += WG * U) {
    float v[U];
    [[unroll]] for (uint u = 0u; u < U; ++u) {
      const uint h = h0 + u * WG;
      v[u] = h < pc.H ? table[id * pc.H + h] : 0.0;
    }
    [[unroll]] for (uint u = 0u; u < U; ++u) {
      const uint h = h0 + u * WG;
      if (h < pc.H) y[t * pc.H + h] = v[u];
    }
  }
}
