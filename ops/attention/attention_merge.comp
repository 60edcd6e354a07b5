// attention, second pass where the keys were split (vulkan:decode_split; vulkan:flash past its per-workgroup
// key limit): merges the key splits of each query row. Split s left
// [acc_s (D), m_s, l_s] (unnormalised output, score max, exp sum over its keys; an empty split has
// m_s = -1e30, l_s = 0). o = sum_s acc_s e^(m_s - M) / sum_s l_s e^(m_s - M) * sigmoid(gate), M = max m_s, taken
// online (the running sums rescaled where the max rises). A workgroup takes WG / IPR rows (IPR = ceil(D / PER)
// invocations per row, at most WG), PER head dims per invocation per pass (strided), so that a short row does not leave
// most of a workgroup idle. With split_keys > 0, split s holds keys [s split_keys, ...): the splits past a row's last
// key (kv_len + its token: causal) are empty and never read, so a kernel may leave them unwritten.
#version 450
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Part { float part[]; };
layout(std430, binding = 1) readonly buffer Gate { float gate[]; };
layout(std430, binding = 2) writeonly buffer O { float o[]; };
layout(push_constant) uniform Push { uint rows, D, splits, n_q, kv_len, split_keys; } pc;

const uint PER = 4u;  // head dims per invocation per pass over the splits

void main() {
  const uint lid = gl_LocalInvocationID.x, ipr = min((pc.D + PER - 1u) / PER, WG), rpw = WG / ipr;
  const uint row = hl_group_index() * rpw + lid / ipr, li = lid % ipr;
  if (row >= pc.rows || lid >= rpw * ipr) return;  // no barriers below
  const uint stride = pc.D + 2u, base = row * pc.splits * stride;
  // The splits that hold keys of this row (row = token * n_q + head).
  const uint ns = pc.split_keys == 0u ? pc.splits : min(pc.splits, (pc.kv_len + row / pc.n_q) / pc.split_keys + 1u);
  for (uint d0 = 0u; d0 < pc.D; d0 += PER * ipr) {
    float gt[PER], acc[PER], M = -1e30, L = 0.0;
    [[unroll]] for (uint j = 0u; j < PER; ++j) {
      const uint d = d0 + j * ipr + li;
      gt[j] = d < pc.D ? gate[row * pc.D + d] : 0.0;
      acc[j] = 0.0;
    }
    // Online over the splits, two per step: a step's loads (both splits' max, sum and values) are independent, so
    // they fly together instead of one round trip per load.
    for (uint s = 0u; s < ns; s += 2u) {
      float m[2], l[2], a[2][PER];
      [[unroll]] for (uint u = 0u; u < 2u; ++u) {
        const bool has = s + u < ns;
        const uint at = base + (s + u) * stride;
        m[u] = has ? part[at + pc.D] : -1e30;
        l[u] = has ? part[at + pc.D + 1u] : 0.0;
        [[unroll]] for (uint j = 0u; j < PER; ++j) {
          const uint d = d0 + j * ipr + li;
          a[u][j] = has && d < pc.D ? part[at + d] : 0.0;
        }
      }
      [[unroll]] for (uint u = 0u; u < 2u; ++u) {
        const float mn = max(M, m[u]), co = exp(M - mn), cs = exp(m[u] - mn);
        L = L * co + l[u] * cs;
        [[unroll]] for (uint j = 0u; j < PER; ++j) acc[j] = acc[j] * co + a[u][j] * cs;
        M = mn;
      }
    }
    [[unroll]] for (uint j = 0u; j < PER; ++j) {
      const uint d = d0 + j * ipr + li;
      if (d < pc.D) o[row * pc.D + d] = acc[j] / L / (1.0 + exp(-gt[j]));
    }
  }
}
