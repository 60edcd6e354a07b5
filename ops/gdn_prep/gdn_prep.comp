// gdn_prep (vulkan:fused): the Gated DeltaNet's steps between the projections and the scan (SPEC 4.4
// steps 2-6) in one pass: u = silu(causal depthwise conv of [state; x]), split into q | k | v, q and k
// L2-normalised per key head (q also scaled), beta = sigmoid(b), g = A * softplus(a + dt_bias), and the
// conv state <- the last K-1 rows of [state; x].
// A workgroup per (head, block of TB tokens); heads are the nk q heads, the nk k heads, then the nv v
// heads, each a run of D = dk or dv consecutive channels of x. Phase 1: an invocation per channel walks
// the block's tokens with the K-tap window in registers (as ssm_conv.comp does) and leaves u in shared
// memory; phase 2 (q, k heads): GROUP invocations sum one token's squares; phase 3: the block's outputs
// written row by row (consecutive invocations, consecutive columns). The v heads' workgroups also write
// their head's gates. Only block 0 reads the old state (TB >= K-1), so it alone writes the new one, each
// invocation after its own reads: no race within the dispatch.
// x [T, C]; b, a [T, nv]; w [C, K]; A, dt_bias [nv]; state [K-1, C]; q, k [T, nk*dk]; v [T, nv*dv];
// beta, g [T, nv].
#version 450
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint K = 4;       // taps
layout(constant_id = 2) const uint TB = 16;     // tokens per workgroup, >= K - 1
layout(constant_id = 3) const uint GROUP = 16;  // invocations per token's sum of squares (power of two, divides WG)
layout(constant_id = 4) const uint DMAX = 128;  // max(dk, dv): the shared row width
#include "common.glsl"
#include "group_sum.glsl"
#include "softplus.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) readonly buffer Apre { float a[]; };
layout(std430, binding = 3) readonly buffer W { float w[]; };
layout(std430, binding = 4) readonly buffer Aw { float A[]; };
layout(std430, binding = 5) readonly buffer Dt { float dt_bias[]; };
layout(std430, binding = 6) buffer State { float state[]; };
layout(std430, binding = 7) writeonly buffer Q { float q[]; };
layout(std430, binding = 8) writeonly buffer Kout { float k[]; };
layout(std430, binding = 9) writeonly buffer V { float v[]; };
layout(std430, binding = 10) writeonly buffer Beta { float beta[]; };
layout(std430, binding = 11) writeonly buffer G { float g[]; };
layout(push_constant) uniform Push {
  uint T, C, nk, nv, dk, dv;
  float scale, eps;  // q's scale (1/sqrt(dk)); the norms' epsilon
} pc;

shared float u[TB * DMAX];  // the block's silu(conv) of this head, [token][channel]
shared float factor[TB];    // per token: scale / sqrt(sum u^2 + eps) (q, k heads)

float window_row(uint i, uint c) {  // row i of [state; x]
  return i < K - 1u ? state[i * pc.C + c] : x[(i - (K - 1u)) * pc.C + c];
}

void main() {
  const uint head = gl_WorkGroupID.x, t0 = gl_WorkGroupID.y * TB, L = hl_role();
  const uint nt = min(TB, pc.T - t0);  // tokens in this block (workgroup-uniform)
  const uint kd = pc.nk * pc.dk;
  const bool is_v = head >= 2u * pc.nk;
  const uint D = is_v ? pc.dv : pc.dk;
  const uint c0 = is_v ? 2u * kd + (head - 2u * pc.nk) * pc.dv : head * pc.dk;  // first channel of x

  // Phase 1: conv + silu of this head's channels over the block. The block's inputs are loaded first (TB of them, a
  // constant trip count: all in flight at once, not a round trip per token), then convolved.
  for (uint i = L; i < D; i += WG) {
    const uint c = c0 + i;
    float wc[K], win[K], xt[TB];  // win[0..K-2]: the previous K-1 inputs, oldest first; win[K-1]: the current one
    for (uint j = 0u; j < K; ++j) wc[j] = w[c * K + j];
    for (uint j = 0u; j + 1u < K; ++j) win[j] = window_row(t0 + j, c);
    [[unroll]] for (uint t = 0u; t < TB; ++t) xt[t] = t < nt ? x[(t0 + t) * pc.C + c] : 0.0;
    [[unroll]] for (uint t = 0u; t < TB; ++t) {
      if (t >= nt) break;  // uniform per workgroup
      win[K - 1u] = xt[t];
      float acc = 0.0;  // taps summed oldest first, as the reference does
      for (uint j = 0u; j < K; ++j) acc += wc[j] * win[j];
      u[t * D + i] = acc / (1.0 + exp(-acc));
      for (uint j = 0u; j + 1u < K; ++j) win[j] = win[j + 1u];
    }
    if (gl_WorkGroupID.y == 0u) {  // the new state: rows T .. T+K-2 of [state; x], all read before written
      for (uint j = 0u; j + 1u < K; ++j) win[j] = window_row(pc.T + j, c);
      for (uint j = 0u; j + 1u < K; ++j) state[j * pc.C + c] = win[j];
    }
  }
  barrier();

  // Phase 2 (q and k heads; the branch and the loop are workgroup-uniform, as hl_group_sum needs):
  // WG / GROUP tokens at a time, GROUP invocations each.
  if (!is_v) {
    const float s = head < pc.nk ? pc.scale : 1.0;
    for (uint tb = 0u; tb < nt; tb += WG / GROUP) {
      const uint t = tb + L / GROUP;
      float ss = 0.0;
      for (uint i = L % GROUP; t < nt && i < D; i += GROUP) ss += u[t * D + i] * u[t * D + i];
      ss = hl_group_sum(ss, L);
      if (t < nt && L % GROUP == 0u) factor[t] = s / sqrt(ss + pc.eps);
    }
    barrier();
  }

  // Phase 3: the block's outputs.
  if (head < pc.nk) {
    for (uint e = L; e < nt * D; e += WG) q[(t0 + e / D) * kd + head * D + e % D] = u[e] * factor[e / D];
  } else if (!is_v) {
    for (uint e = L; e < nt * D; e += WG) k[(t0 + e / D) * kd + (head - pc.nk) * D + e % D] = u[e] * factor[e / D];
  } else {
    const uint h = head - 2u * pc.nk;
    for (uint e = L; e < nt * D; e += WG) v[(t0 + e / D) * (pc.nv * D) + h * D + e % D] = u[e];
    for (uint t = L; t < nt; t += WG) {  // this value head's gates, one token per invocation
      const uint i = (t0 + t) * pc.nv + h;
      beta[i] = 1.0 / (1.0 + exp(-b[i]));
      g[i] = A[h] * softplus(a[i] + dt_bias[h]);
    }
  }
}
