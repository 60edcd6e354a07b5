// The residual add and rmsnorm that follow a producer kernel (add_rmsnorm: s = x + y, n = s / rms(s) * gain, rows of
// G values), run by the producer's last workgroup: every workgroup, after its last write of y, takes a ticket from a
// counter; the one that draws the last ticket reads all of y (through a coherent view: the other workgroups wrote it)
// and writes s and n, then sets the counter back to 0 for the next dispatch. A decode stream saves the add_rmsnorm
// dispatch and its dependent step. Every workgroup of the dispatch must call it (none may return early), from uniform
// control flow.
// Before including: common.glsl with HL_WORKGROUP_SUM_SIZE (the workgroup size, WG), and HL_TAIL_BINDING, the first of
// the six bindings below. The host binds: a counter of one uint (0 before the dispatch), y again, x, gain, s, n.
#ifndef HL_TAIL_ADD_RMSNORM_GLSL
#define HL_TAIL_ADD_RMSNORM_GLSL

layout(std430, binding = HL_TAIL_BINDING) buffer TailCounter { uint tail_counter; };
layout(std430, binding = HL_TAIL_BINDING + 1) coherent readonly buffer TailY { float tail_y[]; };
layout(std430, binding = HL_TAIL_BINDING + 2) readonly buffer TailX { float tail_x[]; };
layout(std430, binding = HL_TAIL_BINDING + 3) readonly buffer TailGain { float tail_gain[]; };
layout(std430, binding = HL_TAIL_BINDING + 4) writeonly buffer TailS { float tail_s[]; };
layout(std430, binding = HL_TAIL_BINDING + 5) writeonly buffer TailN { float tail_n[]; };

shared uint hl_tail_ticket;
// Values of a row per invocation: the host keeps G <= HL_TAIL_NV * the workgroup size (kTailValuesPerInvocation).
#define HL_TAIL_NV 16u

void hl_tail_add_rmsnorm(uint rows, uint G, float eps) {
  memoryBarrierBuffer();  // this workgroup's writes of y reach the device before its ticket
  barrier();
  if (gl_LocalInvocationIndex == 0u) hl_tail_ticket = atomicAdd(tail_counter, 1u);
  barrier();
  if (hl_tail_ticket + 1u != gl_NumWorkGroups.x * gl_NumWorkGroups.y * gl_NumWorkGroups.z) return;  // uniform
  memoryBarrierBuffer();
  // x, y and the gain loaded together (a constant trip count: unrolled, in flight at once), s and n written from
  // registers: one round trip after the ticket instead of three.
  for (uint r = 0u; r < rows; ++r) {
    float v[HL_TAIL_NV], gv[HL_TAIL_NV], ss = 0.0;
    for (uint j = 0u; j < HL_TAIL_NV; ++j) {
      const uint i = gl_LocalInvocationIndex + j * HL_WORKGROUP_SUM_SIZE;
      v[j] = i < G ? tail_x[r * G + i] + tail_y[r * G + i] : 0.0;
      gv[j] = i < G ? tail_gain[i] : 0.0;
    }
    for (uint j = 0u; j < HL_TAIL_NV; ++j) {
      const uint i = gl_LocalInvocationIndex + j * HL_WORKGROUP_SUM_SIZE;
      if (i < G) tail_s[r * G + i] = v[j];
      ss += v[j] * v[j];
    }
    const float inv = 1.0 / sqrt(hl_workgroup_sum(ss) / float(G) + eps);
    for (uint j = 0u; j < HL_TAIL_NV; ++j) {
      const uint i = gl_LocalInvocationIndex + j * HL_WORKGROUP_SUM_SIZE;
      if (i < G) tail_n[r * G + i] = v[j] * inv * gv[j];
    }
  }
  if (gl_LocalInvocationIndex == 0u) tail_counter = 0u;
}

#endif
