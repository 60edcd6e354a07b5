// ssm_conv (vulkan:channel): y = silu(causal depthwise conv of [state; x]) and state <- its last K-1 rows.
// An invocation per (channel, block of TB tokens) walks its tokens with the K-tap window in registers
// (tap 0 = oldest), seeded with the K-1 inputs before the block; blocks give a long prompt parallelism
// beyond the C channels. Only block 0 reads the old state (TB >= K-1), so it also writes the new one,
// after its reads: no race within the dispatch. x, y [T, C]; w [C, K]; state [K-1, C].
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;
layout(constant_id = 1) const uint K = 4;    // taps
layout(constant_id = 2) const uint TB = 16;  // tokens per invocation, >= K - 1

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) buffer State { float state[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push { uint T, C; } pc;

float window_row(uint i, uint c) {  // row i of [state; x]
  return i < K - 1u ? state[i * pc.C + c] : x[(i - (K - 1u)) * pc.C + c];
}

void main() {
  const uint c = gl_WorkGroupID.x * WG + gl_LocalInvocationID.x, t0 = gl_WorkGroupID.y * TB;
  if (c >= pc.C) return;
  float wc[K], win[K];  // win[0..K-2]: the previous K-1 inputs, oldest first; win[K-1]: the current one
  for (uint j = 0u; j < K; ++j) wc[j] = w[c * K + j];
  for (uint j = 0u; j + 1u < K; ++j) win[j] = window_row(t0 + j, c);
  for (uint t = t0; t < min(pc.T, t0 + TB); ++t) {
    win[K - 1u] = x[t * pc.C + c];
    float acc = 0.0;  // taps summed oldest first, as the reference does
    for (uint j = 0u; j < K; ++j) acc += wc[j] * win[j];
    y[t * pc.C + c] = acc / (1.0 + exp(-acc));  // silu
    for (uint j = 0u; j + 1u < K; ++j) win[j] = win[j + 1u];
  }
  if (gl_WorkGroupID.y == 0u) {  // the new state: rows T .. T+K-2 of [state; x], all read before written
    for (uint j = 0u; j + 1u < K; ++j) win[j] = window_row(pc.T + j, c);
    for (uint j = 0u; j + 1u < K; ++j) state[j * pc.C + c] = win[j];
  }
}
