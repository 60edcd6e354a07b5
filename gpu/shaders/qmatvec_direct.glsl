// The body of qmatvec_direct*.comp (see qmatvec_direct.comp). Defines before including:
//   QMV_NORM      the matmul's input is rmsnorm(x + a (+ b)) * gain, computed while x is staged (the residual add
//                 and norm of add_rmsnorm folded into the projection: one dependent dispatch fewer per add_norm);
//   QMV_NORM_OUT  with QMV_NORM: workgroup 0 also writes the sum and the normed row, for the ops that read them
//                 (every workgroup of every consumer computes the same values in the same order).
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const uint TYPE = 12;  // ggml type id
layout(constant_id = 2) const uint R = 4;      // rows per subgroup pass
layout(constant_id = 3) const uint UPL = 2;    // 32-value units per lane per step
layout(constant_id = 4) const uint XV = 512;   // vec4s of x staged: K / 4
layout(constant_id = 5) const uint TWO = 0;    // QMV_NORM: 1 with a second addend b
#define HL_WORKGROUP_SUM_SIZE WG
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { vec4 x4[]; };   // [T, K]
layout(std430, binding = 1) readonly buffer W { uint wq[]; };    // raw rows (WeightStore::device_raw)
layout(std430, binding = 2) readonly buffer W4 { uvec4 wq4[]; };  // the same rows as 16-byte units
layout(std430, binding = 3) writeonly buffer Y { float y[]; };  // [T, N]
layout(push_constant) uniform Push { uint T, K, N, row_bytes; float eps; } pc;
#ifdef QMV_NORM
// x above is the residual stream; the addends and the norm's gain (add_rmsnorm.comp's inputs):
layout(std430, binding = 4) readonly buffer A { vec4 a4[]; };
layout(std430, binding = 5) readonly buffer B { vec4 b4[]; };  // read only when TWO
layout(std430, binding = 6) readonly buffer Gain { vec4 gain4[]; };
#ifdef QMV_NORM_OUT
layout(std430, binding = 7) writeonly buffer S { vec4 sum4[]; };    // x + a (+ b)
layout(std430, binding = 8) writeonly buffer Nrm { vec4 nrm4[]; };  // its rmsnorm * gain
#endif
#endif

#define HLQ_WORD(buf, i) wq[i]
#define HLQ_UVEC4(buf, i) wq4[i]
#include "quant_blocks.glsl"

shared vec4 xs[XV];

void main() {
  const uint lanes = gl_SubgroupSize, lane = gl_SubgroupInvocationID, units = pc.K / 32u;
  const uint nsg = hl_num_subgroups();
  const uint first = (hl_group_index() * nsg + gl_SubgroupID) * R;
  const uint stride = gl_NumWorkGroups.x * gl_NumWorkGroups.y * nsg * R;
  for (uint t = 0u; t < pc.T; ++t) {
    barrier();  // the previous token's x is no longer read
    const uint xrow = t * (pc.K / 4u);
#ifdef QMV_NORM
    // add_rmsnorm's arithmetic: v = x + a (x + (a + b)), n = v * (1 / sqrt(mean(v^2) + eps)) * gain.
    float ss = 0.0;
    for (uint i = gl_LocalInvocationID.x; i < pc.K / 4u; i += WG) {
      const vec4 v = x4[xrow + i] + (TWO != 0u ? a4[xrow + i] + b4[xrow + i] : a4[xrow + i]);
      xs[i] = v;
      ss += dot(v, v);
    }
    const float inv = 1.0 / sqrt(hl_workgroup_sum(ss) / float(pc.K) + pc.eps);
    for (uint i = gl_LocalInvocationID.x; i < pc.K / 4u; i += WG) {
      const vec4 v = xs[i], n = v * inv * gain4[i];
#ifdef QMV_NORM_OUT
      if (hl_group_index() == 0u) {
        sum4[xrow + i] = v;
        nrm4[xrow + i] = n;
      }
#endif
      xs[i] = n;
    }
#else
    for (uint i = gl_LocalInvocationID.x; i < pc.K / 4u; i += WG) xs[i] = x4[xrow + i];
#endif
    barrier();
    for (uint r0 = first; r0 < pc.N; r0 += stride) {  // uniform per subgroup
      float acc[R];
      for (uint r = 0u; r < R; ++r) acc[r] = 0.0;
      for (uint u0 = lane; u0 < units; u0 += lanes * UPL) {
        for (uint i = 0u; i < UPL; ++i) {
          // Past the row's units: a repeat of the last, weighted 0 (no branch between the loads).
          const uint u = u0 + i * lanes, uu = min(u, units - 1u);
          const uvec2 runs = hlq_unit_runs(TYPE, uu) >> 2u;
          vec4 xv[8];
          for (uint k = 0u; k < 4u; ++k) {
            xv[k] = xs[runs.x + k];
            xv[k + 4u] = xs[runs.y + k];
          }
          const vec2 xsum = hlq_run_sums(xv);
          for (uint r = 0u; r < R; ++r) {
            const uint row = min(r0 + r, pc.N - 1u);  // past the last row: a repeat, not stored
            vec4 q[8], ms;
            hlq_unit(TYPE, 0u, row * pc.row_bytes, uu, q, ms);
            const float d = hlq_unit_dot(q, ms, xv, xsum);
            acc[r] += u < units ? d : 0.0;
          }
        }
      }
      for (uint r = 0u; r < R; ++r) {
        const float s = subgroupAdd(acc[r]);
        if (subgroupElect() && r0 + r < pc.N) y[t * pc.N + r0 + r] = s;
      }
    }
  }
}
