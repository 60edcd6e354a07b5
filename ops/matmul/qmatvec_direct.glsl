// matmul / lm_head / matmul_group (vulkan:qmatvec_direct): y[T, N] = x[T, K] w[N, K]^T for decode, w in ggml
// blocks (quant_blocks.glsl), x in f32 and f32 accumulation: the exact products of vulkan:qmatvec, with the weight
// stream read differently. Up to four weights that share x (matmul_group: a layer's q, k, v projections) run as
// segments of one dispatch, each with its own block type, rows and output.
//
// Why: qmatvec stages a workgroup's rows in shared memory behind a barrier, so a workgroup has one round of
// loads in flight and then computes; at the decode projections' sizes (2 to 10 MB) that serialises load
// latency and arithmetic (far from the bytes' time: reports/<device>/matmul.md). Here nothing waits on a
// barrier after x is staged: each subgroup takes R rows per pass, every lane the same 32-value units of
// each row (UPL of them per step, unrolled), and all R x UPL units' words are independent loads the
// compiler issues before the arithmetic. Q4_K/Q5_K fields are 16-byte loads (HLQ_UVEC4); Q6_K and Q8_0
// blocks are only 2-byte aligned and read as words.
// x sits in shared memory (K floats): one 16-byte read of x serves R rows. With XG x is read from global
// memory instead (every subgroup reads the same K floats, served by the caches), so the weight loads issue
// at once, not behind the staging's round trip and barrier. Subgroups walk passes grid-stride over the
// segments' rows (each segment's rows padded to whole passes, so a pass lies in one segment and the branch
// on it is uniform), so any subgroup size works. A dispatch per decode step saved is worth a few microseconds
// of dependent latency; the small projections (b, a: 32 rows) would leave the GPU idle alone.
// QMV_NORM (qmatvec_direct_norm.comp: add_rmsnorm_matmul_group's vulkan:fused_decode): the residual add and rmsnorm
// in front: x is the residual stream, every workgroup stages (x + a) * gain where it stages x, and workgroup 0
// writes x + a, so no dispatch of its own sits before the projections. The norm's 1 / rms is one factor per row of
// products, applied at the store: the sum of squares rides on the staging's barrier (subgroup partials in shared
// memory), no barrier or round trip is added before the weights' loads.
// QMV_RMS (qmatvec_direct_rms.comp: rms_scaled_matmul's vulkan:fused_decode): a per-head 1 / rms in front: x is staged as
// it is, and each head of pc.dv columns has its factor 1 / sqrt(sum of its pc.parts partial sums of squares / dv + eps)
// (gdn_decode's gated output and its blocks' sums of squares), formed beside the staging, behind the same barrier; it
// multiplies the products of the units that lie in that head (a unit never straddles two heads: the host checks dv
// against the units' spans).
// Included by qmatvec_direct{,_norm,_rms}{,_x16}.comp.
#ifndef HL_QMATVEC_DIRECT_GLSL
#define HL_QMATVEC_DIRECT_GLSL
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const uint TYPE = 12;  // ggml type id
layout(constant_id = 2) const uint R = 4;      // rows per subgroup pass
layout(constant_id = 3) const uint UPL = 2;    // 32-value units per lane per step
layout(constant_id = 4) const uint XV = 512;   // vec4s of x staged: K / 4
layout(constant_id = 5) const uint XG = 0;     // 1: x read from global memory (cached), not staged: no barrier
layout(constant_id = 6) const uint SGS = 32;   // the smallest subgroup size the device may run: the trip count covers it
layout(constant_id = 7) const uint NSEG = 1;   // segments (weights) in use, 1..4
layout(constant_id = 8) const uint TYPE1 = 12;  // segments 1..3's types
layout(constant_id = 9) const uint TYPE2 = 12;
layout(constant_id = 10) const uint TYPE3 = 12;
// Diagnosis only (results wrong): 1 loads each unit and its block header as always but skips the decode and the
// products (a word of the unit stands in): what the arithmetic costs beside the loads. With x16: 2 skips the staging
// of x (its loads, the norm, the rounding; the barriers stay), 4 skips the weights' loads (values from the row index).
layout(constant_id = 11) const uint DIAG = 0;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { vec4 x4[]; };   // [T, K]
// Per segment s: its raw rows (WeightStore::device_raw), the same rows as 16-byte units, its output [T, N_s].
// Unused segments are bound to segment 0's buffers and never read.
layout(std430, binding = 1) readonly buffer W0 { uint wq0[]; };
layout(std430, binding = 2) readonly buffer W40 { uvec4 wv0[]; };
layout(std430, binding = 3) writeonly buffer Y0 { float y0[]; };
layout(std430, binding = 4) readonly buffer W1 { uint wq1[]; };
layout(std430, binding = 5) readonly buffer W41 { uvec4 wv1[]; };
layout(std430, binding = 6) writeonly buffer Y1 { float y1[]; };
layout(std430, binding = 7) readonly buffer W2 { uint wq2[]; };
layout(std430, binding = 8) readonly buffer W42 { uvec4 wv2[]; };
layout(std430, binding = 9) writeonly buffer Y2 { float y2[]; };
layout(std430, binding = 10) readonly buffer W3 { uint wq3[]; };
layout(std430, binding = 11) readonly buffer W43 { uvec4 wv3[]; };
layout(std430, binding = 12) writeonly buffer Y3 { float y3[]; };
#ifdef QMV_NORM  // the addend, the norm's gain and the sum x + a written by workgroup 0, all [T, K] (gain [K])
layout(std430, binding = 13) readonly buffer A { vec4 a4[]; };
layout(std430, binding = 14) readonly buffer Gain { vec4 gain4[]; };
layout(std430, binding = 15) writeonly buffer S { vec4 s4[]; };
#endif
#ifdef QMV_RMS  // [T, K / dv * parts]: each head's partial sums of squares
layout(std430, binding = 13) readonly buffer SumSq { float sumsq[]; };
#endif
// N, row_bytes and the first (padded) row of each segment in the dispatch's row space; end: its padded last.
// eps: the folded norm's; dv, parts: QMV_RMS's head width and partial sums per head.
layout(push_constant) uniform Push { uint T, K, end; uvec4 N, row_bytes, first; float eps; uint dv, parts; } pc;

// buf is a constant at every call (pass() is called with literal segments), so these fold to one buffer.
#define HLQ_WORD(buf, i) ((buf) == 0u ? wq0[i] : (buf) == 1u ? wq1[i] : (buf) == 2u ? wq2[i] : wq3[i])
#define HLQ_UVEC4(buf, i) ((buf) == 0u ? wv0[i] : (buf) == 1u ? wv1[i] : (buf) == 2u ? wv2[i] : wv3[i])
#include "quant_blocks.glsl"

#ifdef QMV_X16
// x as 16-bit fixed point (ops/shaders/x16.glsl), every segment a K-quant: integer dot products, no float x staged.
#define HLX_RUNS (XV / 4u)
#include "x16.glsl"
void hlx_zero(uint r) {  // DIAG 2: a run staged as zeros, no loads
  hlx_hi[r] = uvec4(0u);
  hlx_lo[r] = uvec4(0u);
  hlx_sd[r] = vec2(0.0);
}
shared vec4 xs[1];
#else
shared vec4 xs[XG != 0u ? 1u : XV];
#endif

#ifdef QMV_RMS
shared float qmv_hs[(XV + 7u) / 8u];  // each head's 1 / rms (heads of at least 32 columns)
// Token t's heads' factors from their partial sums (beside the staging of x; read after its barrier).
void head_scales(uint t) {
  const uint heads = pc.K / pc.dv;
  for (uint h = gl_LocalInvocationID.x; h < heads; h += WG) {
    float ss = 0.0;
    for (uint q = 0u; q < pc.parts; ++q) ss += sumsq[(t * heads + h) * pc.parts + q];
    qmv_hs[h] = 1.0 / sqrt(ss / float(pc.dv) + pc.eps);
  }
}
#endif

void store(uint seg, uint i, float v) {
  if (seg == 0u) y0[i] = v;
  else if (seg == 1u) y1[i] = v;
  else if (seg == 2u) y2[i] = v;
  else y3[i] = v;
}

// One subgroup pass: rows r0 .. r0 + R - 1 of segment `seg` (of `type`, N rows) for token t.
// scale: a factor for the whole row's sum (QMV_NORM's 1 / rms; 1 otherwise).
void pass(uint seg, uint type, uint t, uint r0, uint N, uint row_bytes, float scale) {
  // The unit loop's trip count is a constant (units = K / 32 from XV, at least SGS lanes): the compiler unrolls it
  // and issues every step's loads together instead of one dependent round per step.
  const uint lanes = gl_SubgroupSize, lane = gl_SubgroupInvocationID, units = XV / 8u;
  const uint xrow = t * (pc.K / 4u);
  float acc[R];
  for (uint r = 0u; r < R; ++r) acc[r] = 0.0;
  for (uint step = 0u; step < (units + SGS * UPL - 1u) / (SGS * UPL); ++step) {
    const uint u0 = lane + step * lanes * UPL;  // past the row: clamped loads, weighted 0 below (no branch)
    for (uint i = 0u; i < UPL; ++i) {
      // Past the row's units: a repeat of the last, weighted 0 (no branch between the loads).
      const uint u = u0 + i * lanes, uu = min(u, units - 1u);
#ifdef QMV_RMS
      const float hs = qmv_hs[hlq_unit_runs(type, uu).x / pc.dv];  // 1 / rms of the unit's head
#else
      const float hs = 1.0;
#endif
#ifdef QMV_X16
      const uvec2 xr = hlq_unit_runs(type, uu) >> 4u;
      for (uint r = 0u; r < R; ++r) {
        const uint row = min(r0 + r, N - 1u);
        uvec4 lo, hi;
        vec4 ms;
        float bias;
        if ((DIAG & 4u) != 0u) {
          lo = uvec4(row ^ uu, row, uu, row + uu) & 0x0F0F0F0Fu;
          hi = lo.yzwx;
          ms = vec4(1e-6);  // small: the stream's later ops stay finite
          bias = 0.0;
        } else {
          hlq_unit_packed(type, seg, row * row_bytes, uu, lo, hi, ms, bias);
        }
        const float d = hlx_unit_dot(lo, hi, ms, bias, xr.x, xr.y);
        acc[r] += u < units ? hs * d : 0.0;
      }
#else
      const uvec2 runs = hlq_unit_runs(type, uu) >> 2u;
      vec4 xv[8];
      for (uint k = 0u; k < 4u; ++k) {
        xv[k] = XG != 0u ? x4[xrow + runs.x + k] : xs[runs.x + k];
        xv[k + 4u] = XG != 0u ? x4[xrow + runs.y + k] : xs[runs.y + k];
      }
      const vec2 xsum = hlq_run_sums(xv);
      for (uint r = 0u; r < R; ++r) {
        const uint row = min(r0 + r, N - 1u);  // past the last row: a repeat, not stored
        float d;
        if (DIAG == 1u) {
          uvec4 lo, hi;
          vec4 ms;
          float bias;
          hlq_unit_packed(type, seg, row * row_bytes, uu, lo, hi, ms, bias);
          d = ms.x * float((lo.x ^ hi.y ^ lo.z ^ hi.w) & 0xFFu) + xsum.x;
        } else {
          vec4 q[8], ms;
          hlq_unit(type, seg, row * row_bytes, uu, q, ms);
          d = hlq_unit_dot(q, ms, xv, xsum);
        }
        acc[r] += u < units ? hs * d : 0.0;
      }
#endif
    }
  }
  for (uint r = 0u; r < R; ++r) {
    const float s = subgroupAdd(acc[r]) * scale;
    if (subgroupElect() && r0 + r < N) store(seg, t * N + r0 + r, s);
  }
}

#ifdef QMV_NORM
// Token t's x + a times the gain, staged as the plain kernel stages x: each invocation takes runs of 16 values (4 vec4s;
// a constant count, so every load is in flight at once), the gain loaded with them; each subgroup's part of the sum of
// squares of x + a into qmv_ss (read after the caller's barrier: norm_scale).
const uint NRUN = (XV + 3u) / 4u, RPI = (NRUN + WG - 1u) / WG;  // runs of the row; runs per invocation
shared float qmv_ss[WG];  // a partial per subgroup (at most WG of them)
void stage_normed(uint t) {
  const uint base = t * (pc.K / 4u);
  float ss = 0.0;
  for (uint j = 0u; j < RPI; ++j) {
    const uint r = gl_LocalInvocationID.x + j * WG;
    vec4 v[4];
    for (uint k = 0u; k < 4u; ++k) {
      const uint i = 4u * r + k;
      v[k] = i < XV ? x4[base + i] + a4[base + i] : vec4(0.0);
      const vec4 g = i < XV ? gain4[i] : vec4(0.0);
      ss += dot(v[k], v[k]);
      if (i < XV && hl_group_index() == 0u) s4[base + i] = v[k];
      v[k] *= g;
#ifndef QMV_X16
      if (i < XV) xs[i] = v[k];
#endif
    }
#ifdef QMV_X16
    if (r < NRUN) hlx_stage(r, v);
#endif
  }
  ss = subgroupAdd(ss);
  if (subgroupElect()) qmv_ss[gl_SubgroupID] = ss;
}
// 1 / rms of the row staged last, from the subgroups' partials (after the barrier that follows stage_normed).
float norm_scale() {
  float ss = 0.0;
  for (uint i = 0u; i < hl_num_subgroups(); ++i) ss += qmv_ss[i];
  return 1.0 / sqrt(ss / float(pc.K) + pc.eps);
}
#endif

void main() {
  const uint nsg = hl_num_subgroups();
  const uint first = (hl_group_index() * nsg + gl_SubgroupID) * R;
  const uint stride = gl_NumWorkGroups.x * gl_NumWorkGroups.y * nsg * R;
  for (uint t = 0u; t < pc.T; ++t) {
    float scale = 1.0;
#if defined(QMV_NORM)
    barrier();  // the previous token's x is no longer read
    if ((DIAG & 2u) == 0u) stage_normed(t);
#ifdef QMV_X16
    else for (uint r = gl_LocalInvocationID.x; r < NRUN; r += WG) hlx_zero(r);
#endif
    barrier();
    if ((DIAG & 2u) == 0u) scale = norm_scale();
#elif defined(QMV_X16)
    barrier();  // the previous token's x is no longer read
    for (uint r = gl_LocalInvocationID.x; r < pc.K / 16u; r += WG) {
      if ((DIAG & 2u) != 0u) {
        hlx_zero(r);
        continue;
      }
      vec4 v[4];
      for (uint k = 0u; k < 4u; ++k) v[k] = x4[t * (pc.K / 4u) + 4u * r + k];
      hlx_stage(r, v);
    }
#ifdef QMV_RMS
    head_scales(t);
#endif
    barrier();
#else
    if (XG == 0u) {
      barrier();  // the previous token's x (and QMV_RMS's factors) are no longer read
      for (uint i = gl_LocalInvocationID.x; i < pc.K / 4u; i += WG) xs[i] = x4[t * (pc.K / 4u) + i];
#ifdef QMV_RMS
      head_scales(t);
#endif
      barrier();
    }
#endif
    for (uint r0 = first; r0 < pc.end; r0 += stride) {  // uniform per subgroup
      if (NSEG == 1u || r0 < pc.first.y) pass(0u, TYPE, t, r0, pc.N.x, pc.row_bytes.x, scale);
      else if (NSEG == 2u || r0 < pc.first.z) pass(1u, TYPE1, t, r0 - pc.first.y, pc.N.y, pc.row_bytes.y, scale);
      else if (NSEG == 3u || r0 < pc.first.w) pass(2u, TYPE2, t, r0 - pc.first.z, pc.N.z, pc.row_bytes.z, scale);
      else pass(3u, TYPE3, t, r0 - pc.first.w, pc.N.w, pc.row_bytes.w, scale);
    }
  }
}

#endif
