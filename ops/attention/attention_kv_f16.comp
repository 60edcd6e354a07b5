// attention (vulkan:flash_coopmat with attention.flash_coopmat.f16_cache = 1): the KV cache rows a prompt chunk
// reads, [0, kv_len + T) x W, rounded to f16 once per call (two per 32-bit word, packHalf2x16), so that every
// query tile then reads half the bytes and stages them without converting.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer KC { vec4 kc[]; };
layout(std430, binding = 1) readonly buffer VC { vec4 vc[]; };
layout(std430, binding = 2) writeonly buffer KH { uvec2 kh[]; };
layout(std430, binding = 3) writeonly buffer VH { uvec2 vh[]; };
layout(push_constant) uniform Push { uint n; } pc;  // vec4s per cache: (kv_len + T) * W / 4

void main() {
  const uint i = hl_group_index() * WG + gl_LocalInvocationID.x;
  if (i >= pc.n) return;
  const vec4 k = kc[i], v = vc[i];
  kh[i] = uvec2(packHalf2x16(k.xy), packHalf2x16(k.zw));
  vh[i] = uvec2(packHalf2x16(v.xy), packHalf2x16(v.zw));
}
