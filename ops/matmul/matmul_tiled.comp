// matmul (vulkan:tiled): y[T, N] = x[T, K] w[N, K]^T. A TILE x TILE block of outputs per workgroup, one per
// invocation, with TILE-wide slices of x and w staged through shared memory (both read along K, coalesced).
#version 450
layout(local_size_x_id = 0, local_size_y_id = 0) in;
layout(constant_id = 0) const uint TILE = 16;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push { uint T, K, N; } pc;

shared float xs[TILE][TILE + 1];  // +1: no bank conflicts on the transposed read
shared float ws[TILE][TILE + 1];

void main() {
  const uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  const uint n0 = gl_WorkGroupID.x * TILE, t0 = gl_WorkGroupID.y * TILE;
  float acc = 0.0;
  for (uint k0 = 0u; k0 < pc.K; k0 += TILE) {
    const uint k = k0 + tx;
    xs[ty][tx] = (t0 + ty < pc.T && k < pc.K) ? x[(t0 + ty) * pc.K + k] : 0.0;
    ws[ty][tx] = (n0 + ty < pc.N && k < pc.K) ? w[(n0 + ty) * pc.K + k] : 0.0;
    barrier();
    for (uint kk = 0u; kk < TILE; ++kk) acc += xs[ty][kk] * ws[tx][kk];
    barrier();
  }
  if (t0 + ty < pc.T && n0 + tx < pc.N) y[(t0 + ty) * pc.N + n0 + tx] = acc;
}
