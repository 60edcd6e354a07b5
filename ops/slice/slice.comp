// slice (vulkan:copy): y[T, n*width] = columns [offset, offset + width) of every block of `period` columns
// of x[T, n*period]. One invocation per output element: consecutive invocations write consecutive
// columns, so both the reads (within a block) and the writes are coalesced.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push {
  uint n;         // output elements, T * out_cols
  uint out_cols;  // blocks * width
  uint in_cols;   // blocks * period
  uint period, offset, width;
} pc;

void main() {
  const uint i = hl_group_index() * WG + gl_LocalInvocationID.x;
  if (i >= pc.n) return;
  const uint t = i / pc.out_cols, c = i - t * pc.out_cols;
  const uint b = c / pc.width, j = c - b * pc.width;
  y[i] = x[t * pc.in_cols + b * pc.period + pc.offset + j];
}
