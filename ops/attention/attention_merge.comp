// attention, second pass where the keys were split (vulkan:decode_split; vulkan:flash past its per-workgroup
// key limit): merges the key splits of each query row. Split s left
// [acc_s (D), m_s, l_s] (unnormalised output, score max, exp sum over its keys; an empty split has
// m_s = -1e30, l_s = 0). o = sum_s acc_s e^(m_s - M) / sum_s l_s e^(m_s - M) * sigmoid(gate), M = max m_s.
// One workgroup per query row, one invocation per head dim (strided). With split_keys > 0, split s holds keys
// [s split_keys, ...): the splits past a row's last key (kv_len + its token: causal) are empty and never read, so
// a kernel may leave them unwritten.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Part { float part[]; };
layout(std430, binding = 1) readonly buffer Gate { float gate[]; };
layout(std430, binding = 2) writeonly buffer O { float o[]; };
layout(push_constant) uniform Push { uint rows, D, splits, n_q, kv_len, split_keys; } pc;

void main() {
  const uint row = hl_group_index();
  if (row >= pc.rows) return;
  const uint stride = pc.D + 2u, base = row * pc.splits * stride;
  // The splits that hold keys of this row (row = token * n_q + head).
  const uint ns = pc.split_keys == 0u ? pc.splits : min(pc.splits, (pc.kv_len + row / pc.n_q) / pc.split_keys + 1u);
  float M = -1e30, L = 0.0;
  for (uint s = 0u; s < ns; ++s) M = max(M, part[base + s * stride + pc.D]);
  for (uint s = 0u; s < ns; ++s) L += part[base + s * stride + pc.D + 1u] * exp(part[base + s * stride + pc.D] - M);
  for (uint d = gl_LocalInvocationID.x; d < pc.D; d += WG) {
    float acc = 0.0;
    for (uint s = 0u; s < ns; ++s)
      acc += part[base + s * stride + d] * exp(part[base + s * stride + pc.D] - M);
    o[row * pc.D + d] = acc / L / (1.0 + exp(-gate[row * pc.D + d]));
  }
}
