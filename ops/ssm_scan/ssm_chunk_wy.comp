// ssm_scan (vulkan:chunked, vulkan:chunked_coopmat): [U | W] = N^-1 [beta V | beta e^gamma K] per batch b (value
// head, chunk), N = I + A, A strictly lower (ssm_chunk_gemm MODE 0), by forward substitution on the right-hand sides:
//   X[r][j] = R[r][j] - sum_{s < r} A[r][s] X[s][j].
// An invocation owns whole columns j of [U | W] (dv + dk of them: every column at once for a workgroup as wide) and
// keeps a column's C values in registers (every loop unrolled over C, a specialization constant, so every index is
// a constant), so the substitution needs no barriers and N^-1 is never formed. A is read 4 entries at a time, every
// invocation the same address (a broadcast); its zeros on and above the diagonal let each row take whole vec4s
// (the entries they meet there hold their right-hand sides, finite). C^2 / 2 multiply-adds per column.
#version 450
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint C = 64;  // a multiple of 4, at most CMAX
#include "common.glsl"
const uint CMAX = 128u;

layout(std430, binding = 1) restrict readonly buffer Kb { float k[]; };
layout(std430, binding = 2) restrict readonly buffer Vb { float v[]; };
layout(std430, binding = 3) restrict readonly buffer Betab { float beta[]; };
layout(std430, binding = 7) restrict readonly buffer Gamb { vec2 gam[]; };  // [b][C]: gamma = hi + lo
layout(std430, binding = 8) restrict readonly buffer APb { vec4 ap4[]; };   // [b][2C][C]: A (rows < C), then P
layout(std430, binding = 9) restrict writeonly buffer UWb { float uw[]; };  // [b][C][dv + dk]: U | W
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
    float x[CMAX];
    [[unroll]] for (uint r = 0u; r < CMAX; ++r)
      if (r < C) x[r] = r >= nrows ? 0.0 : isv ? sb[r] * v[(row0 + r) * ld + src] : sbe[r] * k[(row0 + r) * ld + src];
    [[unroll]] for (uint r = 1u; r < CMAX; ++r) {
      if (r >= C) break;
      float acc = x[r];
      [[unroll]] for (uint s = 0u; s < r; s += 4u) {
        const vec4 a = ap4[a0 + r * (C / 4u) + s / 4u];
        acc -= a.x * x[s] + a.y * x[s + 1u] + a.z * x[s + 2u] + a.w * x[s + 3u];
      }
      x[r] = acc;
    }
    [[unroll]] for (uint r = 0u; r < CMAX; ++r)
      if (r < C) uw[x0 + r * N + j] = x[r];
  }
}
