// moe_block (vulkan:fused_decode), step 1 of 3: everything that needs only x, in one dispatch. Row r of the
// combined output: r < E, the router's logit (router_r . x); E <= r < E + Fs, the shared expert's
// silu(sgate_f . x) * (sup_f . x); r = E + Fs, its gate sigmoid(gate_w . x). ROWS rows per workgroup, a
// subgroup per row (uniform: each row's kind is the subgroup's), its lanes over 32-value units, subgroupAdd.
// INTERLEAVE: workgroup b takes rows b, b + blocks, b + 2 blocks, ... instead of ROWS consecutive ones, so the f32
// router rows (four times a quantized row's bytes) are spread over every workgroup rather than loading the first few.
// MB_NORM (moe_block_x_norm.comp: add_rmsnorm_moe_block's vulkan:fused_decode): the residual add and rmsnorm in front:
// x is the residual stream, every workgroup stages its token's (x + a) * gain in shared memory and reads it from there,
// the norm's 1 / rms applied to each row's sum (the sum of squares rides on the staging's barrier), and its token's
// first workgroup writes x + a and the normed row (steps 2 and 3 read that).
// MB_X16 (moe_block_x{,_norm}_x16.comp): x (or (x + a) * gain) also staged as 16-bit fixed point per run of 16
// (ops/shaders/x16.glsl) and the shared expert's K-quant rows as integer dot products; the f32 router stays f32.
// Included by moe_block_x{,_norm}{,_x16}.comp.
#ifndef HL_MOE_BLOCK_X_GLSL
#define HL_MOE_BLOCK_X_GLSL
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint ROWS = 8;
layout(constant_id = 2) const uint TYPE_R = 0;    // ggml type ids: router, shared gate and up, gate_w
layout(constant_id = 3) const uint TYPE_SG = 12;
layout(constant_id = 4) const uint TYPE_SU = 12;
layout(constant_id = 5) const uint TYPE_GW = 0;
layout(constant_id = 6) const uint UH = 64;   // 32-value units per row: H / 32
layout(constant_id = 7) const uint SGS = 32;   // the smallest subgroup size the device may run: the trip counts cover it
// f32 router rows: 1 read 16 bytes at a time, a 32-value unit per lane (0: word by word); 2 as consecutive 16-byte
// words across the lanes (each load instruction 16 x subgroup-size contiguous bytes, a row's x the same vec4s).
layout(constant_id = 8) const uint ROUTER16 = 1;
layout(constant_id = 9) const uint INTERLEAVE = 1;  // rows strided by the workgroup count (above); 0: consecutive
// MB_NORM: 1 loads each subgroup's weight units (f32 router rows 16 bytes at a time, the shared expert's K-quant units as
// raw words) into registers before the token's x + a is staged and normed, so their round trip overlaps the staging's
// instead of following its barrier; rows of other types load after it, as with 0.
layout(constant_id = 10) const uint EARLY = 0;
// 1: the shared expert's SwiGLU rows are this step's (rows E .. E + Fs - 1, the gate's row after them); 0: step 2's
// (moe_block_gate_up.glsl's SHARED), this step the router's rows and the gate's only.
layout(constant_id = 11) const uint SHARED_X = 1;
// 1: zero y, which the two-step block's second step (moe_block_experts.comp) sums its parts into.
layout(constant_id = 12) const uint ZERO_Y = 0;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { vec4 x4[]; };    // [T, H]
layout(std430, binding = 1) readonly buffer R { uint rq[]; };    // raw rows [E, H]
layout(std430, binding = 1) readonly buffer R4 { uvec4 rq4[]; };  // the same, 16 bytes at a time
layout(std430, binding = 2) readonly buffer SGate { uint sgq[]; };  // raw rows [Fs, H]
layout(std430, binding = 3) readonly buffer SU { uint suq[]; };  // raw rows [Fs, H]
layout(std430, binding = 4) readonly buffer GW { uint gwq[]; };  // raw row [1, H]
layout(std430, binding = 5) writeonly buffer L { float logits[]; };  // [T, E]
layout(std430, binding = 6) writeonly buffer HS { float hs[]; };     // [T, Fs]
layout(std430, binding = 7) writeonly buffer S { float sg[]; };      // [T]
#ifdef MB_NORM
layout(std430, binding = 8) readonly buffer A { vec4 a4[]; };       // [T, H]: the addend
layout(std430, binding = 9) readonly buffer Gain { vec4 gain4[]; };  // [H]
layout(std430, binding = 10) writeonly buffer Sum { vec4 s4[]; };    // [T, H]: x + a
layout(std430, binding = 11) writeonly buffer N { vec4 n4[]; };      // [T, H]: its rmsnorm, steps 2 and 3's x
shared vec4 xs[UH * 8u];
#define XV(i) xs[i]
layout(std430, binding = 12) writeonly buffer Y { float y[]; };    // [T, H]
#else
#define XV(i) x4[xrow + (i)]
layout(std430, binding = 8) writeonly buffer Y { float y[]; };     // [T, H]
#endif
layout(push_constant) uniform Push { uint T, H, E, F, Fs, k, blocks, rb_r, rb_g, rb_u, rb_d, rb_sg, rb_su, rb_sd, rb_gw; float eps; } pc;

// Words, not 16-byte units: the decoder reads one word at a time, and a 16-byte load per word measured slower.
#define HLQ_WORD(buf, i) ((buf) == 0u ? rq[i] : (buf) == 1u ? sgq[i] : (buf) == 2u ? suq[i] : gwq[i])

// The shared expert's rows in this step's row space (0 where step 2 takes them).
uint FS() { return SHARED_X != 0u ? pc.Fs : 0u; }
#include "quant_blocks.glsl"
#ifdef MB_X16
#define HLX_RUNS (UH * 2u)
#include "x16.glsl"
#endif
bool kquant(uint type) { return type == HLQ_Q4_K || type == HLQ_Q5_K || type == HLQ_Q6_K; }

// This lane's part of (row at byte `row` of source `buf`) . x_t, over units lane, lane + gl_SubgroupSize, ...: a constant
// trip count, so the compiler unrolls it and issues every step's loads before the arithmetic.
float row_dot(uint type, uint buf, uint row, uint xrow, uint lane) {
  float acc = 0.0;
  if (type == HLQ_F32 && buf == 0u && ROUTER16 == 2u) {  // rows of whole 128-byte units: 16-byte aligned
    const uint NV = UH * 8u, base = row / 16u;
    for (uint i = 0u; i < (NV + SGS - 1u) / SGS; ++i) {
      const uint ji = lane + i * gl_SubgroupSize, j = min(ji, NV - 1u);  // past the row: clamped, weighted 0
      acc += ji < NV ? dot(uintBitsToFloat(rq4[base + j]), XV(j)) : 0.0;
    }
    return acc;
  }
#ifdef MB_X16
  if (kquant(type)) {
    for (uint i = 0u; i < (UH + SGS - 1u) / SGS; ++i) {
      const uint ui = lane + i * gl_SubgroupSize, u = min(ui, UH - 1u);  // past the row: clamped, weighted 0
      uvec4 lo, hi;
      vec4 ms;
      float bias;
      hlq_unit_packed(type, buf, row, u, lo, hi, ms, bias);
      const uvec2 xr = hlq_unit_runs(type, u) >> 4u;
      acc += ui < UH ? hlx_unit_dot(lo, hi, ms, bias, xr.x, xr.y) : 0.0;
    }
    return acc;
  }
#endif
  for (uint i = 0u; i < (UH + SGS - 1u) / SGS; ++i) {
    const uint ui = lane + i * gl_SubgroupSize, u = min(ui, UH - 1u);  // past the row: clamped, weighted 0
    const uvec2 runs = hlq_unit_runs(type, u) >> 2u;
    vec4 xv[8], q[8], ms;
    for (uint i = 0u; i < 4u; ++i) {
      xv[i] = XV(runs.x + i);
      xv[i + 4u] = XV(runs.y + i);
    }
    if (type == HLQ_F32 && buf == 0u && ROUTER16 == 1u) {  // rows of whole 128-byte units: 16-byte aligned
      for (uint k = 0u; k < 8u; ++k) q[k] = uintBitsToFloat(rq4[(row + u * 128u) / 16u + k]);
      ms = vec4(1.0, 0.0, 1.0, 0.0);
    } else {
      hlq_unit(type, buf, row, u, q, ms);
    }
    acc += ui < UH ? hlq_unit_dot(q, ms, xv, hlq_run_sums(xv)) : 0.0;
  }
  return acc;
}

#ifdef MB_NORM
// EARLY: which rows load before the staging, and the lane's registers for one row: per unit 8 vec4 of an f32 router row,
// or the shared gate's and up's raw words (HlqRaw a, b, c, e in 4 slots each).
const uint UPL = (UH + SGS - 1u) / SGS;  // a lane's units per row
bool early_router() { return EARLY != 0u && TYPE_R == HLQ_F32 && ROUTER16 == 1u; }
bool early_shared() { return EARLY != 0u && kquant(TYPE_SG) && kquant(TYPE_SU); }
uvec4 ew[UPL * 8u];  // the subgroup's early row, this lane's units
void raw_put(HlqRaw r, uint at) {
  ew[at] = r.a;
  ew[at + 1u] = r.b;
  ew[at + 2u] = r.c;
  ew[at + 3u] = uvec4(r.e, 0u, 0u);
}
HlqRaw raw_get(uint at) {
  HlqRaw r;
  r.a = ew[at];
  r.b = ew[at + 1u];
  r.c = ew[at + 2u];
  r.e = ew[at + 3u].xy;
  return r;
}
// Row r's early loads (nothing for rows that load late).
void early_load(uint r, uint lane) {
  for (uint i = 0u; i < UPL * 8u; ++i) ew[i] = uvec4(0u);
  const bool router = r < pc.E && early_router(), shared_row = r >= pc.E && r < pc.E + FS() && early_shared();
  for (uint i = 0u; i < UPL; ++i) {
    const uint u = min(lane + i * gl_SubgroupSize, UH - 1u);
    if (router) {
      for (uint k = 0u; k < 8u; ++k) ew[8u * i + k] = rq4[(r * pc.rb_r + u * 128u) / 16u + k];
    } else if (shared_row) {
      HlqRaw g, v;
      hlq_unit_raw(TYPE_SG, 1u, (r - pc.E) * pc.rb_sg, u, g);
      hlq_unit_raw(TYPE_SU, 2u, (r - pc.E) * pc.rb_su, u, v);
      raw_put(g, 8u * i);
      raw_put(v, 8u * i + 4u);
    }
  }
}
// As row_dot, from early_load's registers: the router's values (which = 0) or the shared gate's (1) or up's (2) units.
float row_dot_early(uint type, uint row, uint xrow, uint lane, uint which) {
  float acc = 0.0;
  for (uint i = 0u; i < UPL; ++i) {
    const uint ui = lane + i * gl_SubgroupSize, u = min(ui, UH - 1u);
    const uvec2 runs = hlq_unit_runs(type, u) >> 2u;
    vec4 xv[8], q[8], ms;
    for (uint k = 0u; k < 4u; ++k) {
      xv[k] = XV(runs.x + k);
      xv[k + 4u] = XV(runs.y + k);
    }
    if (which == 0u) {
      for (uint k = 0u; k < 8u; ++k) q[k] = uintBitsToFloat(ew[8u * i + k]);
      ms = vec4(1.0, 0.0, 1.0, 0.0);
    } else {
      uvec4 lo, hi;
      float bias;
      hlq_unit_unpack(type, row, u, raw_get(8u * i + 4u * (which - 1u)), lo, hi, ms, bias);
#ifdef MB_X16
      const uvec2 xr = hlq_unit_runs(type, u) >> 4u;
      acc += ui < UH ? hlx_unit_dot(lo, hi, ms, bias, xr.x, xr.y) : 0.0;
      continue;
#endif
      hlq_unit_bytes(lo, hi, bias, q);
    }
    acc += ui < UH ? hlq_unit_dot(q, ms, xv, hlq_run_sums(xv)) : 0.0;
  }
  return acc;
}

// Token t's x + a times the gain into xs (a constant count of vec4s per invocation: every load in flight at once, the
// gain with them); returns its 1 / rms. `first`: this workgroup also writes x + a and the normed row.
const uint NV4 = UH * 8u, VPI = (NV4 + WG - 1u) / WG;
shared float mb_ss[WG];  // a partial sum of squares per subgroup
float stage_normed(uint xrow, bool first) {
  float ss = 0.0;
#ifdef MB_X16
  // A run of 16 values (4 vec4s) per invocation, staged in f32 and as 16-bit fixed point (the 1 / rms applied later).
  for (uint j = 0u; j < (UH * 2u + WG - 1u) / WG; ++j) {
    const uint r = gl_LocalInvocationID.x + j * WG;
    if (r >= UH * 2u) break;
    vec4 v[4];
    for (uint k = 0u; k < 4u; ++k) {
      const uint i = 4u * r + k;
      const vec4 w = x4[xrow + i] + a4[xrow + i];
      ss += dot(w, w);
      v[k] = w * gain4[i];
      xs[i] = v[k];
      if (first) s4[xrow + i] = w;
    }
    hlx_stage(r, v);
  }
#else
  for (uint j = 0u; j < VPI; ++j) {
    const uint i = gl_LocalInvocationID.x + j * WG;
    const vec4 v = i < NV4 ? x4[xrow + i] + a4[xrow + i] : vec4(0.0);
    ss += dot(v, v);
    if (i < NV4) {
      xs[i] = v * gain4[i];
      if (first) s4[xrow + i] = v;
    }
  }
#endif
  ss = subgroupAdd(ss);
  if (subgroupElect()) mb_ss[gl_SubgroupID] = ss;
  barrier();
  ss = 0.0;
  for (uint i = 0u; i < hl_num_subgroups(); ++i) ss += mb_ss[i];
  const float inv = 1.0 / sqrt(ss / float(pc.H) + pc.eps);
  if (first)
    for (uint i = gl_LocalInvocationID.x; i < NV4; i += WG) n4[xrow + i] = xs[i] * inv;
  return inv;
}
#endif

void main() {
  const uint g = hl_group_index();
  if (g >= pc.T * pc.blocks) return;  // uniform per workgroup
  const uint t = g / pc.blocks, b = g % pc.blocks, xrow = t * (pc.H >> 2u);
  const uint lane = gl_SubgroupInvocationID;
  if (ZERO_Y != 0u)
    for (uint i = g * WG + gl_LocalInvocationID.x; i < pc.T * pc.H; i += pc.T * pc.blocks * WG) y[i] = 0.0;
#ifdef MB_NORM
  // EARLY: the subgroup's first row loaded before the staging (a subgroup with more rows loads the rest after it).
  const uint r0 = INTERLEAVE != 0u ? b + gl_SubgroupID * pc.blocks : b * ROWS + gl_SubgroupID;
  const bool early = EARLY != 0u && gl_SubgroupID < ROWS && r0 < pc.E + FS() &&
                     (r0 < pc.E ? early_router() : early_shared());  // uniform per subgroup
  if (early) early_load(r0, lane);
  const float scale = stage_normed(xrow, g % pc.blocks == 0u);
#else
  const float scale = 1.0;
#ifdef MB_X16
  for (uint r = gl_LocalInvocationID.x; r < UH * 2u; r += WG) {
    vec4 v[4];
    for (uint k = 0u; k < 4u; ++k) v[k] = x4[xrow + 4u * r + k];
    hlx_stage(r, v);
  }
  barrier();
#endif
#endif
  for (uint i = gl_SubgroupID; i < ROWS; i += hl_num_subgroups()) {  // uniform per subgroup
    const uint r = INTERLEAVE != 0u ? b + i * pc.blocks : b * ROWS + i;
    if (r >= pc.E + FS() + 1u) break;
#ifdef MB_NORM
    if (early && i == gl_SubgroupID) {
      if (r < pc.E) {
        const float l = subgroupAdd(row_dot_early(TYPE_R, 0u, xrow, lane, 0u)) * scale;
        if (subgroupElect()) logits[t * pc.E + r] = l;
      } else {
        const uint f = r - pc.E;
        const float ga = subgroupAdd(row_dot_early(TYPE_SG, f * pc.rb_sg, xrow, lane, 1u)) * scale;
        const float ua = subgroupAdd(row_dot_early(TYPE_SU, f * pc.rb_su, xrow, lane, 2u)) * scale;
        if (subgroupElect()) hs[t * pc.Fs + f] = (ga / (1.0 + exp(-ga))) * ua;
      }
      continue;
    }
#endif
    if (r < pc.E) {
      const float l = subgroupAdd(row_dot(TYPE_R, 0u, r * pc.rb_r, xrow, lane)) * scale;
      if (subgroupElect()) logits[t * pc.E + r] = l;
    } else if (r < pc.E + FS()) {
      const uint f = r - pc.E;
      const float ga = subgroupAdd(row_dot(TYPE_SG, 1u, f * pc.rb_sg, xrow, lane)) * scale;
      const float ua = subgroupAdd(row_dot(TYPE_SU, 2u, f * pc.rb_su, xrow, lane)) * scale;
      if (subgroupElect()) hs[t * pc.Fs + f] = (ga / (1.0 + exp(-ga))) * ua;
    } else {
      const float s = subgroupAdd(row_dot(TYPE_GW, 3u, 0u, xrow, lane)) * scale;
      if (subgroupElect()) sg[t] = 1.0 / (1.0 + exp(-s));
    }
  }
}

#endif
