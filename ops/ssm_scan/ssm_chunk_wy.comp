// ssm_scan (vulkan:chunked, vulkan:chunked_coopmat): [U | W] = N^-1 [beta V | beta e^gamma K] per batch b (value
// head, chunk), N = I + A, A strictly lower (ssm_chunk_gemm MODE 0), by forward substitution on the right-hand sides:
//   X[r][j] = R[r][j] - sum_{s < r} A[r][s] X[s][j].
// An invocation owns whole columns j of [U | W] (dv + dk of them: every column at once for a workgroup as wide), so
// the substitution needs no barriers and N^-1 is never formed. Rows go in blocks of RB: a block's RB values in
// registers (its own triangle with constant indices), the earlier rows' values read back from the invocation's own
// writes to uw, A read 4 entries at a time (every invocation the same address: a broadcast). C^2 / 2
// multiply-adds per column.
#version 450
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint C = 64;  // a multiple of RB
#include "common.glsl"
const uint RB = 16u;

layout(std430, binding = 1) readonly buffer Kb { float k[]; };
layout(std430, binding = 2) readonly buffer Vb { float v[]; };
layout(std430, binding = 3) readonly buffer Betab { float beta[]; };
layout(std430, binding = 7) readonly buffer Gamb { vec2 gam[]; };  // [b][C]: gamma = hi + lo
layout(std430, binding = 8) readonly buffer APb { vec4 ap4[]; };   // [b][2C][C]: A (rows < C), then P
layout(std430, binding = 9) buffer UWb { float uw[]; };            // [b][C][dv + dk]: U | W
layout(push_constant) uniform Push { uint t0, T, nk, nv, dk, dv, nch, tiled; } pc;

shared float sb[C], sbe[C];  // beta_r, beta_r e^gamma_r (0 past the sequence)

void main() {
  const uint b = hl_group_index();
  if (b >= pc.nv * pc.nch) return;
  const uint h = b / pc.nch, row0 = pc.t0 + b % pc.nch * C, nrows = min(C, pc.T - row0), L = gl_LocalInvocationID.x;
  const uint kcol = (pc.tiled != 0u ? h % pc.nk : h / (pc.nv / pc.nk)) * pc.dk, ldk = pc.nk * pc.dk;
  const uint ldv = pc.nv * pc.dv, N = pc.dv + pc.dk, a0 = b * 2u * C * (C / 4u), x0 = b * C * N;
  for (uint r = L; r < C; r += WG) {
    const vec2 x = gam[b * C + r];
    const float bt = r < nrows ? beta[(row0 + r) * pc.nv + h] : 0.0;
    sb[r] = bt, sbe[r] = bt * exp(x.x + x.y);
  }
  barrier();

  for (uint j = L; j < N; j += WG) {
    const bool isv = j < pc.dv;
    const uint src = isv ? h * pc.dv + j : kcol + j - pc.dv, ld = isv ? ldv : ldk;
    for (uint r0 = 0u; r0 < C; r0 += RB) {
      float x[RB];
      [[unroll]] for (uint i = 0u; i < RB; ++i) {
        const uint r = r0 + i;
        x[i] = r >= nrows ? 0.0 : isv ? sb[r] * v[(row0 + r) * ld + src] : sbe[r] * k[(row0 + r) * ld + src];
      }
      // The earlier blocks' rows, 4 at a time (this invocation wrote them).
      for (uint s = 0u; s < r0; s += 4u) {
        const vec4 xs = vec4(uw[x0 + s * N + j], uw[x0 + (s + 1u) * N + j], uw[x0 + (s + 2u) * N + j],
                             uw[x0 + (s + 3u) * N + j]);
        [[unroll]] for (uint i = 0u; i < RB; ++i) x[i] -= dot(ap4[a0 + (r0 + i) * (C / 4u) + s / 4u], xs);
      }
      // The block's own triangle, in row order.
      [[unroll]] for (uint i = 1u; i < RB; ++i) {
        const uint ar = a0 + (r0 + i) * (C / 4u) + r0 / 4u;
        [[unroll]] for (uint s4 = 0u; s4 < i; s4 += 4u) {
          const vec4 a = ap4[ar + s4 / 4u];
          [[unroll]] for (uint e = 0u; e < 4u; ++e)
            if (s4 + e < i) x[i] -= a[e] * x[s4 + e];
        }
      }
      [[unroll]] for (uint i = 0u; i < RB; ++i) uw[x0 + (r0 + i) * N + j] = x[i];
    }
  }
}
