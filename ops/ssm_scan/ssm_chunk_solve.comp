// ssm_scan (vulkan:chunked): T = N^-1 per batch b (value head, chunk), N = I + A, A strictly lower
// (ssm_chunk_gemm.comp MODE 0; N's own diagonal is ignored: unit diagonal). Forward substitution column
// by column: column j of T solves N t = e_j,
//   T[r][j] = [r == j] - sum_{j <= s < r} A[r][s] T[s][j],
// so an invocation owns whole columns and reads back only its own results: no barriers. C^3 / 6
// multiply-adds per chunk, small next to the products (U and W then come from one GEMM with T). The zeros
// above the diagonal are written too (MODE 1 reads whole k slices).
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint C = 64;
#include "common.glsl"

layout(std430, binding = 8) readonly buffer APb { float ap[]; };  // [b][2C][C]: A, then P
layout(std430, binding = 9) buffer Tb { float tm[]; };            // [b][C][C]
layout(push_constant) uniform Push { uint t0, T, nk, nv, dk, dv, nch, tiled; } pc;

void main() {
  const uint b = hl_group_index();
  if (b >= pc.nv * pc.nch) return;
  const uint a0 = b * 2u * C * C, t0 = b * C * C;
  // Rows past the end of the sequence (a short last chunk) have A = 0: T is the identity there, and
  // its columns past nrows are never read.
  const uint nrows = min(C, pc.T - (pc.t0 + b % pc.nch * C));
  for (uint j = gl_LocalInvocationID.x; j < nrows; j += WG) {
    for (uint r = 0u; r < C; ++r) {
      float x = r == j ? 1.0 : 0.0;
      for (uint s = j; s < min(r, nrows); ++s) x -= ap[a0 + r * C + s] * tm[t0 + s * C + j];
      tm[t0 + r * C + j] = x;
    }
  }
}
