// moe_block (vulkan:fused_decode), step 3 of 3: y[t, h] = sum over slots j of down_e[h] . hmid[t, j]
// + sg[t] * (sdown[h] . hs[t]). ROWS outputs h of one token per workgroup; a subgroup per output (RPS of them), its lanes
// over (slot, 32-value unit) pairs of the routed rows (F = 512: 16 units, 8 slots: 128 pairs), then over
// the shared row's units; two subgroupAdds. The token's expert ids are read once into shared memory and the
// loops have constant trip counts, so each lane's loads issue together instead of one dependent round per step.
// Included by moe_block_down.comp and moe_block_down_x16.comp.
#ifndef HL_MOE_BLOCK_DOWN_GLSL
#define HL_MOE_BLOCK_DOWN_GLSL
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint ROWS = 8;
layout(constant_id = 2) const uint TYPE_D = 14;
layout(constant_id = 3) const uint TYPE_SD = 14;
layout(constant_id = 4) const uint K = 8;      // slots per token
layout(constant_id = 5) const uint UF = 16;    // 32-value units per routed down row: F / 32
layout(constant_id = 6) const uint US = 16;    // per shared down row: Fs / 32
layout(constant_id = 7) const uint SGS = 32;   // the smallest subgroup size the device may run: the trip counts cover it
// Outputs per subgroup (at least ROWS / the workgroup's subgroups; the host sizes it for its largest subgroup size): a
// constant trip count with clamped outputs, so every output's loads issue before the first one's products wait on them.
layout(constant_id = 8) const uint RPS = 1;
// 1 (MBD_X16): each lane's weight units loaded as raw words (HlqRaw) before hmid and hs are staged, so their round trip
// overlaps the staging's instead of following its barrier (the expert ids read from memory by every lane, not from se).
layout(constant_id = 9) const uint EARLY = 0;
#define HL_WORKGROUP_SUM_SIZE WG
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

layout(std430, binding = 0) readonly buffer M { vec4 hmid4[]; };   // [T*k, F]
layout(std430, binding = 1) readonly buffer Ex { int expert[]; };  // [T, k]
layout(std430, binding = 2) readonly buffer D { uint dq[]; };      // raw rows [E*H, F]
layout(std430, binding = 3) readonly buffer HS { vec4 hs4[]; };    // [T, Fs]
layout(std430, binding = 4) readonly buffer SD { uint sdq[]; };    // raw rows [H, Fs]
layout(std430, binding = 5) readonly buffer S { float sg[]; };     // [T]
layout(std430, binding = 6) writeonly buffer Y { float y[]; };     // [T, H]
layout(push_constant) uniform Push { uint T, H, E, F, Fs, k, blocks, rb_r, rb_g, rb_u, rb_d, rb_sg, rb_su, rb_sd, rb_gw; float eps; } pc;

// Words, not 16-byte units: the decoder reads one word at a time, and a 16-byte load per word measured slower.
#define HLQ_WORD(buf, i) ((buf) == 0u ? dq[i] : sdq[i])
#include "quant_blocks.glsl"
#ifdef MBD_X16
// hmid's K rows and hs as 16-bit fixed point (ops/shaders/x16.glsl), staged by the workgroup; both downs K-quants.
#define HLX_RUNS (2u * (K * UF + US))
#include "x16.glsl"
#endif

// This lane's term of unit u of the row at byte `row` of source `buf` against the vector at vec4 `mrow` of
// source msrc (0: hmid, 1: hs).
float unit_dot(uint type, uint buf, uint row, uint u, uint mrow) {
  const uvec2 runs = hlq_unit_runs(type, u) >> 2u;
  vec4 xv[8], q[8], ms;
  for (uint i = 0u; i < 4u; ++i) {
    xv[i] = buf == 0u ? hmid4[mrow + runs.x + i] : hs4[mrow + runs.x + i];
    xv[i + 4u] = buf == 0u ? hmid4[mrow + runs.y + i] : hs4[mrow + runs.y + i];
  }
  hlq_unit(type, buf, row, u, q, ms);
  return hlq_unit_dot(q, ms, xv, hlq_run_sums(xv));
}

#ifdef MBD_X16
// As unit_dot, against the staged runs from run `r0` on (the slot's hmid row, or hs).
float unit_dot16(uint type, uint buf, uint row, uint u, uint r0) {
  const uvec2 xr = r0 + (hlq_unit_runs(type, u) >> 4u);
  uvec4 lo, hi;
  vec4 ms;
  float bias;
  hlq_unit_packed(type, buf, row, u, lo, hi, ms, bias);
  return hlx_unit_dot(lo, hi, ms, bias, xr.x, xr.y);
}

// As unit_dot16, from the unit's raw words loaded earlier.
float unit_dot16_raw(uint type, uint row, uint u, uint r0, HlqRaw raw) {
  const uvec2 xr = r0 + (hlq_unit_runs(type, u) >> 4u);
  uvec4 lo, hi;
  vec4 ms;
  float bias;
  hlq_unit_unpack(type, row, u, raw, lo, hi, ms, bias);
  return hlx_unit_dot(lo, hi, ms, bias, xr.x, xr.y);
}
const uint NP = (K * UF + SGS - 1u) / SGS, NSP = (US + SGS - 1u) / SGS;  // a lane's routed and shared units per output
#endif

shared uint se[K];

void main() {
  const uint g = hl_group_index();
  if (g < pc.T * pc.blocks) {  // uniform per workgroup (with the tail, every workgroup goes on to take its ticket)
    const uint t = g / pc.blocks, h0 = (g % pc.blocks) * ROWS, lane = gl_SubgroupInvocationID;
    for (uint j = gl_LocalInvocationID.x; j < K; j += WG) se[j] = uint(clamp(expert[t * K + j], 0, int(pc.E) - 1));
    // Output h0 + gl_SubgroupID + q nsg for q < RPS; past the workgroup's outputs, its last one again (never written).
    const uint nsg = hl_num_subgroups(), last = min(h0 + ROWS, pc.H) - 1u;
#ifdef MBD_X16
    HlqRaw rw[EARLY != 0u ? RPS * NP : 1u], rs[EARLY != 0u ? RPS * NSP : 1u];
    if (EARLY != 0u) {
      [[unroll]] for (uint q = 0u; q < RPS; ++q) {
        const uint h = min(h0 + gl_SubgroupID + q * nsg, last);
        [[unroll]] for (uint s = 0u; s < NP; ++s) {
          const uint i = min(lane + s * gl_SubgroupSize, K * UF - 1u), j = i / UF;
          const uint e = uint(clamp(expert[t * K + j], 0, int(pc.E) - 1));
          hlq_unit_raw(TYPE_D, 0u, (e * pc.H + h) * pc.rb_d, i % UF, rw[q * NP + s]);
        }
        [[unroll]] for (uint s = 0u; s < NSP; ++s)
          hlq_unit_raw(TYPE_SD, 1u, h * pc.rb_sd, min(lane + s * gl_SubgroupSize, US - 1u), rs[q * NSP + s]);
      }
    }
    // Runs: K hmid rows, then hs. A constant count per invocation, so all its loads are in flight before the first
    // stage waits on one (a loop bounded by the invocation's index waited a round trip per run).
    const uint NR = 2u * (K * UF + US);
    vec4 v[(NR + WG - 1u) / WG][4];
    for (uint i = 0u; i < (NR + WG - 1u) / WG; ++i) {
      const uint r = gl_LocalInvocationID.x + i * WG, rr = min(r, NR - 1u);
      const bool routed = rr < 2u * K * UF;
      for (uint k = 0u; k < 4u; ++k)
        v[i][k] = routed ? hmid4[t * K * (pc.F >> 2u) + 4u * rr + k] : hs4[t * (pc.Fs >> 2u) + 4u * (rr - 2u * K * UF) + k];
    }
    for (uint i = 0u; i < (NR + WG - 1u) / WG; ++i)
      if (gl_LocalInvocationID.x + i * WG < NR) hlx_stage(gl_LocalInvocationID.x + i * WG, v[i]);
#endif
    barrier();
    float acc[RPS], sacc[RPS];
    [[unroll]] for (uint q = 0u; q < RPS; ++q) {
      const uint h = min(h0 + gl_SubgroupID + q * nsg, last);
      acc[q] = 0.0;
      sacc[q] = 0.0;
      for (uint s = 0u; s < (K * UF + SGS - 1u) / SGS; ++s) {
        const uint ii = lane + s * gl_SubgroupSize, i = min(ii, K * UF - 1u), j = i / UF, u = i % UF;  // clamped, weighted 0
#ifdef MBD_X16
        acc[q] += (ii < K * UF ? 1.0 : 0.0) *
                  (EARLY != 0u ? unit_dot16_raw(TYPE_D, (se[j] * pc.H + h) * pc.rb_d, u, 2u * UF * j, rw[q * NP + s])
                               : unit_dot16(TYPE_D, 0u, (se[j] * pc.H + h) * pc.rb_d, u, 2u * UF * j));
#else
        acc[q] += (ii < K * UF ? 1.0 : 0.0) * unit_dot(TYPE_D, 0u, (se[j] * pc.H + h) * pc.rb_d, u, (t * K + j) * (pc.F >> 2u));
#endif
      }
      for (uint s = 0u; s < (US + SGS - 1u) / SGS; ++s) {
        const uint ui = lane + s * gl_SubgroupSize, u = min(ui, US - 1u);  // clamped, weighted 0
#ifdef MBD_X16
        sacc[q] += (ui < US ? 1.0 : 0.0) * (EARLY != 0u ? unit_dot16_raw(TYPE_SD, h * pc.rb_sd, u, 2u * K * UF, rs[q * NSP + s])
                                                        : unit_dot16(TYPE_SD, 1u, h * pc.rb_sd, u, 2u * K * UF));
#else
        sacc[q] += (ui < US ? 1.0 : 0.0) * unit_dot(TYPE_SD, 1u, h * pc.rb_sd, u, t * (pc.Fs >> 2u));
#endif
      }
    }
    [[unroll]] for (uint q = 0u; q < RPS; ++q) {
      const uint r = gl_SubgroupID + q * nsg;  // uniform per subgroup
      const float a = subgroupAdd(acc[q]), sa = subgroupAdd(sacc[q]);
      if (r < ROWS && h0 + r < pc.H && subgroupElect()) y[t * pc.H + h0 + r] = a + sg[t] * sa;
    }
  }
}

#endif
