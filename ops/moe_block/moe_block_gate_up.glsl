// moe_block (vulkan:fused_decode), step 2 of 3: the routes and the routed experts' SwiGLU. Every workgroup
// takes ROWS rows f of one (token t, slot j) and first finds t's routes itself from the logits (subgroup 0:
// softmax over the E experts, then K rounds of a subgroup argmax, the largest p and the lowest id among equal
// p, as moe_router's reference; weights p / sum of the K chosen in slot order), so no dispatch sits between
// the router and the experts. Then hmid[t, j, f] = weight_j * silu(gate_e[f] . x) * (up_e[f] . x), e the
// slot's expert, a subgroup per row (RPS of them) as in moe_experts' moe_gate_up_q. The first workgroup of each token
// writes its routes for step 3. RANK: the K rounds of argmax replaced by one parallel pass after the softmax: every
// invocation ranks its experts (how many have a larger p, or an equal p and a lower id) and the K of rank < K take
// their slots: the same routes and weights, without K dependent rounds of subgroup reductions.
// MB_DOWN (moe_block_experts.comp: the block in two dispatches): each workgroup also runs down's part of its rows. Its
// ROWS = 32 UPW rows f are those of down's units u0 .. u0 + UPW - 1 (u0 = UPW b for the workgroup's block b, in the
// units' run order), kept in shared memory as w h; then every output h gets down_e[h] . those values, plus a share
// of the shared expert's down (sg sdown[h] . hs over a range of the (unit, h) pairs), added into y by float atomics
// (step 1 zeroes y). Down's K is split over the workgroups that made its inputs, so no dispatch sits between gate/up
// and down; the sum's order over workgroups is not fixed (not bit-reproducible from run to run).
#ifndef HL_MOE_BLOCK_GATE_UP_GLSL
#define HL_MOE_BLOCK_GATE_UP_GLSL
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint ROWS = 8;
layout(constant_id = 2) const uint TYPE_G = 12;
layout(constant_id = 3) const uint TYPE_U = 12;
layout(constant_id = 4) const uint EMAX = 256;  // experts (the host passes E)
layout(constant_id = 5) const uint K = 8;       // slots per token
layout(constant_id = 6) const uint UH = 64;     // 32-value units per row: H / 32
layout(constant_id = 7) const uint SGS = 32;   // the smallest subgroup size the device may run: the trip counts cover it
layout(constant_id = 8) const uint RANK = 0;   // 1: routes by ranking (above); 0: K rounds of a subgroup argmax
layout(constant_id = 9) const uint FIXED = 0;  // diagnosis only (results wrong): slot j takes expert 31 j, no routing
// 1 (K <= TK): route()'s K rounds replaced by a merge (route_merge below); the same routes and weights.
layout(constant_id = 10) const uint MERGE = 0;
// Rows per subgroup (at least ROWS / the workgroup's subgroups; the host sizes it for its largest subgroup size): a
// constant trip count with clamped rows, so every row's loads issue before the first row's products wait on them.
layout(constant_id = 11) const uint RPS = 1;
// 1: this step also takes the shared expert's SwiGLU rows hs[t, f] = silu(sgate_f . x) * (sup_f . x) (instead of step 1):
// T ceil(Fs / ROWS) workgroups after the routed ones, which need no routes and so start their loads at once.
layout(constant_id = 12) const uint SHARED = 0;
layout(constant_id = 13) const uint TYPE_SG = 12;
layout(constant_id = 14) const uint TYPE_SU = 12;
// MB_DOWN: down's and the shared down's types; 1 in EARLY: the workgroup's down units (K-quants) loaded as raw words
// right after the routes, their round trip under the gate/up products.
layout(constant_id = 15) const uint TYPE_D = 14;
layout(constant_id = 16) const uint TYPE_SD = 14;
layout(constant_id = 17) const uint EARLY = 0;
// MB_DOWN, diagnosis only (results wrong): bit 0 stores each output's part instead of adding it (no atomics), bit 1
// leaves down's part out (each workgroup stores its rows' values only): what `experiment --time-failing` times to see
// what the second step's atomics and down cost.
layout(constant_id = 18) const uint DIAG_DOWN = 0;
// MB_DOWN, 1: down and the shared down (K-quants) in chunk columns of H rows (hlq_unit_raw_columns), so that a
// workgroup's column of units, one per output, is read from neighbouring bytes rather than one cache line per output.
layout(constant_id = 19) const uint COLS = 0;
#include "common.glsl"
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require

layout(std430, binding = 0) readonly buffer X { vec4 x4[]; };        // [T, H]
layout(std430, binding = 1) readonly buffer L { float logits[]; };   // [T, E]
layout(std430, binding = 2) readonly buffer G { uint gq[]; };        // raw rows [E*F, H]
layout(std430, binding = 3) readonly buffer U { uint uq[]; };        // raw rows [E*F, H]
#ifdef MB_DOWN
#extension GL_EXT_shader_atomic_float : require
layout(std430, binding = 4) readonly buffer D { uint dq[]; };       // raw rows [E*H, F]
layout(std430, binding = 5) readonly buffer SD { uint sdq[]; };     // raw rows [H, Fs]
layout(std430, binding = 6) readonly buffer HS { vec4 hs4[]; };     // [T, Fs]: the shared expert's SwiGLU (step 1)
layout(std430, binding = 7) readonly buffer S { float sg[]; };      // [T]: its gate (step 1)
layout(std430, binding = 8) buffer Y { float y[]; };                // [T, H]: zeroed by step 1, summed into here
// Words, not 16-byte units: the decoder reads one word at a time, and a 16-byte load per word measured slower (gate and
// up; down's Q4_K units 16 bytes at a time measured no different in the decode stream, H100).
#define HLQ_WORD(buf, i) ((buf) == 0u ? gq[i] : (buf) == 1u ? uq[i] : (buf) == 2u ? dq[i] : sdq[i])
#else
layout(std430, binding = 4) writeonly buffer M { float hmid[]; };    // [T*K, F]
layout(std430, binding = 5) writeonly buffer Ex { int expert[]; };   // [T, K]
layout(std430, binding = 6) writeonly buffer Wt { float weight[]; }; // [T, K]
// SHARED: the shared expert's raw rows [Fs, H] and its SwiGLU [T, Fs] (unused without: bound to the routed ones).
layout(std430, binding = 7) readonly buffer SG { uint sgq[]; };
layout(std430, binding = 8) readonly buffer SU { uint suq[]; };
layout(std430, binding = 9) writeonly buffer HS { float hs[]; };
// Words, not 16-byte units: the decoder reads one word at a time, and a 16-byte load per word measured slower.
#define HLQ_WORD(buf, i) ((buf) == 0u ? gq[i] : (buf) == 1u ? uq[i] : (buf) == 2u ? sgq[i] : suq[i])
#endif
layout(push_constant) uniform Push { uint T, H, E, F, Fs, k, blocks, rb_r, rb_g, rb_u, rb_d, rb_sg, rb_su, rb_sd, rb_gw; } pc;
#include "quant_blocks.glsl"
#ifdef MB_X16
// x as 16-bit fixed point (ops/shaders/x16.glsl), staged while subgroup 0 finds the routes; gate and up K-quants.
// MB_DOWN: after x's runs, the workgroup's w h values (ROWS / 16 runs), down's x where down is a K-quant.
#ifdef MB_DOWN
#define HLX_RUNS (UH * 2u + ROWS / 16u)
#else
#define HLX_RUNS (UH * 2u)
#endif
#include "x16.glsl"
#endif

const uint NONE = 0xffffffffu;
shared float p[EMAX];
shared uint sel_e[K];
shared float sel_w[K];

// The routes' order: a before b when its p is larger, or equal with a lower expert id (moe_router's reference).
bool route_before(float ap, uint ae, float bp, uint be) { return ap > bp || (ap == bp && ae < be); }

// MERGE (in route()): the K largest of the lanes' entries (v: p of experts lane, lane + lanes, ..., -1 past E)
// without K dependent rounds of subgroup reductions: each lane keeps its TK first in route order (an insertion pass),
// then log2(lanes) butterfly levels each merge a lane's list with its partner's (the elementwise better of the list
// and the partner's reversed is a bitonic sequence holding the TK first of both; a bitonic merge network orders it).
// Every lane ends with the same list, in slot order; the weights p / their sum in slot order, as the rounds give them.
const uint TK = 8u;  // the list's length (K <= TK; fixed, so every index below is a constant)

// Subgroup 0 only (uniform within it): token t's K routes into sel_e / sel_w. Lane l holds p of experts l, l + lanes, ...
// in registers (ascending e), and its best one: each of the K rounds is two subgroup reductions (the largest p, then the
// lowest id among equal p), and only the winning lane drops its entry and finds its next best, without a scan of all
// E values per round. p also goes to shared memory for route_ranks().
void route(uint t, uint lane, uint lanes) {
  const uint PER = (EMAX + SGS - 1u) / SGS;  // entries per lane at the smallest subgroup size
  const float neg_inf = uintBitsToFloat(0xff800000u);
  float v[PER];
  float mx = neg_inf;
  for (uint i = 0u; i < PER; ++i) {
    const uint e = lane + i * lanes;
    v[i] = e < EMAX ? logits[t * EMAX + e] : neg_inf;
    mx = max(mx, v[i]);
  }
  mx = subgroupMax(mx);
  float s = 0.0;
  for (uint i = 0u; i < PER; ++i) {
    const uint e = lane + i * lanes;
    v[i] = e < EMAX ? exp(v[i] - mx) : -1.0;  // -1: no expert (p >= 0 otherwise)
    s += e < EMAX ? v[i] : 0.0;
  }
  s = subgroupAdd(s);
  float bv = -1.0;
  uint bi = NONE;
  for (uint i = 0u; i < PER; ++i) {
    const uint e = lane + i * lanes;
    if (e < EMAX) {
      v[i] /= s;
      if (RANK != 0u) p[e] = v[i];
    }
    if (v[i] > bv) {  // ascending e: the lowest id among equal values stays
      bv = v[i];
      bi = i;
    }
  }
  if (RANK != 0u) {  // route_ranks() takes the slots (none left unset, whatever the logits)
    for (uint j = lane; j < K; j += lanes) sel_e[j] = NONE, sel_w[j] = 0.0;
    return;
  }
  if (MERGE != 0u && K <= TK) {  // the merge (above route_before)
    float lp[TK];
    uint le[TK];
    [[unroll]] for (uint q = 0u; q < TK; ++q) lp[q] = -2.0, le[q] = NONE;  // below every entry (p >= 0, -1 past E)
    for (uint i = 0u; i < (EMAX + SGS - 1u) / SGS; ++i) {
      float cp = v[i];
      uint ce = lane + i * lanes;
      [[unroll]] for (uint q = 0u; q < TK; ++q) {  // the entry sinks to its place, each displaced one after it
        const bool take = route_before(cp, ce, lp[q], le[q]);
        const float tp = lp[q];
        const uint te = le[q];
        if (take) lp[q] = cp, le[q] = ce, cp = tp, ce = te;
      }
    }
    for (uint o = 1u; o < lanes; o <<= 1u) {
      float op[TK];
      uint oe[TK];
      [[unroll]] for (uint q = 0u; q < TK; ++q) {
        op[q] = subgroupShuffleXor(lp[TK - 1u - q], o);
        oe[q] = subgroupShuffleXor(le[TK - 1u - q], o);
      }
      [[unroll]] for (uint q = 0u; q < TK; ++q)
        if (route_before(op[q], oe[q], lp[q], le[q])) lp[q] = op[q], le[q] = oe[q];
      [[unroll]] for (uint d = TK / 2u; d > 0u; d >>= 1u)
        [[unroll]] for (uint q = 0u; q < TK; ++q)
          if ((q & d) == 0u && route_before(lp[q + d], le[q + d], lp[q], le[q])) {
            const float tp = lp[q];
            const uint te = le[q];
            lp[q] = lp[q + d], le[q] = le[q + d], lp[q + d] = tp, le[q + d] = te;
          }
    }
    float sum = 0.0;
    [[unroll]] for (uint j = 0u; j < TK; ++j) sum += j < K ? lp[j] : 0.0;
    if (subgroupElect())
      [[unroll]] for (uint j = 0u; j < TK; ++j)
        if (j < K) sel_e[j] = le[j], sel_w[j] = lp[j] / sum;
    return;
  }
  float sum = 0.0;
  for (uint j = 0u; j < K; ++j) {
    const float m = subgroupMax(bv);
    const uint mi = subgroupMin(bv == m && bi != NONE ? lane + bi * lanes : NONE);
    if (mi % lanes == lane) {  // this lane's best was taken: drop it (constant indices only) and find the next
      const uint taken = bi;
      bv = -1.0;
      bi = NONE;
      for (uint i = 0u; i < PER; ++i) {
        if (i == taken) {
          v[i] = -1.0;
        } else if (v[i] > bv) {
          bv = v[i];
          bi = i;
        }
      }
    }
    sum += m;
    if (subgroupElect()) {
      sel_e[j] = mi;
      sel_w[j] = m;
    }
  }
  if (subgroupElect())
    for (uint j = 0u; j < K; ++j) sel_w[j] /= sum;
}

// After route() (p in shared memory), every invocation (uniform control flow): expert e takes slot rank(e) where that
// is below K, rank(e) = #{e' : p[e'] > p[e], or p[e'] == p[e] and e' < e}: the order of route()'s rounds. Weights
// normalised by their sum in slot order, as there.
void route_ranks() {
  for (uint e = gl_LocalInvocationID.x; e < EMAX; e += WG) {
    const float pe = p[e];
    uint rank = 0u;
    for (uint f = 0u; f < EMAX; ++f) rank += p[f] > pe || (p[f] == pe && f < e) ? 1u : 0u;
    if (rank < K) {
      sel_e[rank] = e;
      sel_w[rank] = pe;
    }
  }
  barrier();
  if (gl_LocalInvocationID.x == 0u) {
    float sum = 0.0;
    for (uint j = 0u; j < K; ++j) sum += sel_w[j];
    for (uint j = 0u; j < K; ++j) sel_w[j] /= sum;
  }
  barrier();
}

// Row f of the workgroup's r-th row: f0 + r, or (MB_DOWN) the r-th value of its down units' runs (f0 = 32 u0).
uint mb_row(uint f0, uint r) {
#ifdef MB_DOWN
  const uvec2 runs = hlq_unit_runs(TYPE_D, f0 / 32u + r / 32u);
  return ((r & 16u) == 0u ? runs.x : runs.y) + (r & 15u);
#else
  return f0 + r;
#endif
}

// This subgroup's parts of the gate and up dot products with x of its RPS rows: rows base + mb_row(f0, gl_SubgroupID + q
// nsg) of the gate (type tg, source bg) and up (tu, bu) rows, clamped to `last` (called with constant types and sources).
void swiglu_dots(uint tg, uint tu, uint bg, uint bu, uint rbg, uint rbu, uint base, uint f0, uint last, uint xrow, uint lane,
                 out float ga[RPS], out float ua[RPS]) {
  const uint nsg = hl_num_subgroups();
  [[unroll]] for (uint q = 0u; q < RPS; ++q) {
    const uint row = base + mb_row(f0, min(gl_SubgroupID + q * nsg, last - f0));
    ga[q] = 0.0;
    ua[q] = 0.0;
    for (uint i = 0u; i < (UH + SGS - 1u) / SGS; ++i) {  // constant trip count: unrolled, loads issued together
      const uint ui = lane + i * gl_SubgroupSize, u = min(ui, UH - 1u);  // past the row: clamped, weighted 0
      const float live = ui < UH ? 1.0 : 0.0;
#ifdef MB_X16
      {
        uvec4 lo, hi;
        vec4 ms;
        float bias;
        uvec2 xr = hlq_unit_runs(tg, u) >> 4u;
        hlq_unit_packed(tg, bg, row * rbg, u, lo, hi, ms, bias);
        ga[q] += live * hlx_unit_dot(lo, hi, ms, bias, xr.x, xr.y);
        xr = hlq_unit_runs(tu, u) >> 4u;
        hlq_unit_packed(tu, bu, row * rbu, u, lo, hi, ms, bias);
        ua[q] += live * hlx_unit_dot(lo, hi, ms, bias, xr.x, xr.y);
      }
#else
      const uvec2 runs = hlq_unit_runs(tg, u) >> 2u;
      vec4 xv[8], qv[8], ms;
      for (uint i = 0u; i < 4u; ++i) {
        xv[i] = x4[xrow + runs.x + i];
        xv[i + 4u] = x4[xrow + runs.y + i];
      }
      vec2 xs = hlq_run_sums(xv);
      hlq_unit(tg, bg, row * rbg, u, qv, ms);
      ga[q] += live * hlq_unit_dot(qv, ms, xv, xs);
      if (tu != tg) {  // another type: other runs of x
        const uvec2 ru = hlq_unit_runs(tu, u) >> 2u;
        for (uint i = 0u; i < 4u; ++i) {
          xv[i] = x4[xrow + ru.x + i];
          xv[i + 4u] = x4[xrow + ru.y + i];
        }
        xs = hlq_run_sums(xv);
      }
      hlq_unit(tu, bu, row * rbu, u, qv, ms);
      ua[q] += live * hlq_unit_dot(qv, ms, xv, xs);
#endif
    }
  }
}

// x staged (MB_X16) by the invocations from `skip` on.
void stage_x(uint xrow, uint skip) {
#ifdef MB_X16
  if (gl_LocalInvocationID.x >= skip)
    for (uint r = gl_LocalInvocationID.x - skip; r < UH * 2u; r += WG - skip) {
      vec4 v[4];
      for (uint k = 0u; k < 4u; ++k) v[k] = x4[xrow + 4u * r + k];
      hlx_stage(r, v);
    }
#endif
}

#ifdef MB_DOWN
const uint UPW = ROWS / 32u;                      // down's units per workgroup (the host keeps ROWS whole units)
const uint NRH = (32u * UH + WG - 1u) / WG;       // outputs h per invocation: h = id + i WG
shared vec4 hm4[ROWS / 4u];                       // w h of the workgroup's rows, in its units' run order

// Unit u of output h's row in matrix e of a down source (rb: its row bytes; nb: its blocks per row), K-quants: its raw
// words, from rows as uploaded or (COLS) from chunk columns of H rows per matrix.
void down_raw(uint type, uint buf, uint e, uint h, uint u, uint rb, uint nb, out HlqRaw r) {
  const uint H = 32u * UH;
  if (COLS != 0u) hlq_unit_raw_columns(type, buf, ((e * nb + u / 8u) * hlq_chunks_per_block(type) * H + h) * 16u, 16u * H, u % 8u, r);
  else hlq_unit_raw(type, buf, (e * H + h) * rb, u, r);
}

// That unit of a K-quant as hlq_unit_unpack gives it, from raw words loaded before (`raw`, a constant) or loaded here.
void down_unit(uint type, uint buf, uint e, uint h, uint u, uint rb, uint nb, bool raw, HlqRaw rw, out uvec4 lo, out uvec4 hi,
               out vec4 ms, out float bias) {
  if (!raw) down_raw(type, buf, e, h, u, rb, nb, rw);
  hlq_unit_unpack(type, COLS != 0u ? 0u : (e * 32u * UH + h) * rb, COLS != 0u ? u % 8u : u, rw, lo, hi, ms, bias);
}

// That unit against xv (the unit's 32 activations in run order, xs their run sums).
float down_dot(uint type, uint buf, uint e, uint h, uint u, uint rb, uint nb, vec4 xv[8], vec2 xs, bool raw, HlqRaw rw) {
  vec4 q[8], ms;
  if (type >= HLQ_Q4_K) {
    uvec4 lo, hi;
    float bias;
    down_unit(type, buf, e, h, u, rb, nb, raw, rw, lo, hi, ms, bias);
    hlq_unit_bytes(lo, hi, bias, q);
  } else {
    hlq_unit(type, buf, (e * 32u * UH + h) * rb, u, q, ms);
  }
  return hlq_unit_dot(q, ms, xv, xs);
}

// The first shared unit of output h in this workgroup's range [lo, hi) of (unit, h) pairs, index unit H + h; US past it.
uint shared_first(uint h, uint lo, uint hi, uint US) {
  const uint H = 32u * UH, us = h >= lo ? 0u : (lo - h + H - 1u) / H;
  return us < US && us * H + h < hi ? us : US;
}

// The shared expert's part of output h in this workgroup's range (sg applied by the caller); `raw`, rw: its first unit's
// words loaded before.
float shared_part(uint t, uint h, uint lo, uint hi, uint US, bool raw, HlqRaw rw) {
  float sacc = 0.0;
  const uint H = 32u * UH, us0 = shared_first(h, lo, hi, US);
  for (uint us = us0; us < US && us * H + h < hi; ++us) {
    const uvec2 runs = hlq_unit_runs(TYPE_SD, us) >> 2u;
    vec4 xv[8];
    for (uint k = 0u; k < 4u; ++k) {
      xv[k] = hs4[t * (pc.Fs >> 2u) + runs.x + k];
      xv[k + 4u] = hs4[t * (pc.Fs >> 2u) + runs.y + k];
    }
    // The prefetched unit is the first (the only one where the workgroups are at least as many as the units).
    sacc += down_dot(TYPE_SD, 3u, 0u, h, us, pc.rb_sd, pc.Fs / 256u, xv, hlq_run_sums(xv), raw && us == us0, rw);
  }
  return sacc;
}
#else
// SHARED: workgroup s of the shared expert's, rows f0 .. f0 + ROWS - 1 of token t, without routes.
void shared_rows(uint s) {
  const uint sblocks = (pc.Fs + ROWS - 1u) / ROWS, t = s / sblocks, f0 = (s % sblocks) * ROWS, xrow = t * (pc.H >> 2u);
  stage_x(xrow, 0u);
  barrier();
  const uint nsg = hl_num_subgroups(), last = min(f0 + ROWS, pc.Fs) - 1u;
  float ga[RPS], ua[RPS];
  swiglu_dots(TYPE_SG, TYPE_SU, 2u, 3u, pc.rb_sg, pc.rb_su, 0u, f0, last, xrow, gl_SubgroupInvocationID, ga, ua);
  [[unroll]] for (uint q = 0u; q < RPS; ++q) {
    const uint r = gl_SubgroupID + q * nsg;  // uniform per subgroup
    const float gs = subgroupAdd(ga[q]), us = subgroupAdd(ua[q]);
    if (r < ROWS && f0 + r < pc.Fs && subgroupElect()) hs[t * pc.Fs + f0 + r] = (gs / (1.0 + exp(-gs))) * us;
  }
}

void main() {
  const uint g = hl_group_index(), routed = pc.T * K * pc.blocks;
  if (SHARED != 0u && g >= routed) {  // uniform per workgroup
    if (g < routed + pc.T * ((pc.Fs + ROWS - 1u) / ROWS)) shared_rows(g - routed);
    return;
  }
  if (g >= routed) return;  // uniform per workgroup
  const uint tj = g / pc.blocks, t = tj / K, j = tj % K, f0 = (g % pc.blocks) * ROWS, xrow = t * (pc.H >> 2u);
  const uint lane = gl_SubgroupInvocationID;
  // The other subgroups stage x (all of them when there is only one, before it routes).
  stage_x(xrow, hl_num_subgroups() > 1u ? gl_SubgroupSize : 0u);
  if (FIXED != 0u) {
    if (gl_LocalInvocationID.x < K) sel_e[gl_LocalInvocationID.x] = (31u * gl_LocalInvocationID.x) % EMAX, sel_w[gl_LocalInvocationID.x] = 1.0;
  } else if (gl_SubgroupID == 0u) route(t, lane, gl_SubgroupSize);
  barrier();
  if (RANK != 0u && FIXED == 0u) route_ranks();
  if (g % (K * pc.blocks) == 0u && gl_LocalInvocationID.x < K) {
    expert[t * K + gl_LocalInvocationID.x] = int(sel_e[gl_LocalInvocationID.x]);
    weight[t * K + gl_LocalInvocationID.x] = sel_w[gl_LocalInvocationID.x];
  }
  const uint e = min(sel_e[j], EMAX - 1u);
  const float w = sel_w[j];
  // Row f0 + gl_SubgroupID + q nsg for q < RPS; past the workgroup's rows, its last row again (loaded, never written).
  const uint nsg = hl_num_subgroups(), last = min(f0 + ROWS, pc.F) - 1u;
  float ga[RPS], ua[RPS];
  swiglu_dots(TYPE_G, TYPE_U, 0u, 1u, pc.rb_g, pc.rb_u, e * pc.F, f0, last, xrow, lane, ga, ua);
  [[unroll]] for (uint q = 0u; q < RPS; ++q) {
    const uint r = gl_SubgroupID + q * nsg;  // uniform per subgroup
    const float gs = subgroupAdd(ga[q]), us = subgroupAdd(ua[q]);
    if (r < ROWS && f0 + r < pc.F && subgroupElect()) hmid[tj * pc.F + f0 + r] = w * (gs / (1.0 + exp(-gs))) * us;
  }
}
#endif

#ifdef MB_DOWN
void main() {
  const uint g = hl_group_index(), routed = pc.T * K * pc.blocks;
  if (g >= routed) return;  // uniform per workgroup
  const uint tj = g / pc.blocks, t = tj / K, j = tj % K, b = g % pc.blocks, f0 = b * ROWS, xrow = t * (pc.H >> 2u);
  const uint lane = gl_SubgroupInvocationID, id = gl_LocalInvocationID.x, H = 32u * UH, US = pc.Fs / 32u;
  stage_x(xrow, hl_num_subgroups() > 1u ? gl_SubgroupSize : 0u);
  if (FIXED != 0u) {
    if (id < K) sel_e[id] = (31u * id) % EMAX, sel_w[id] = 1.0;
  } else if (gl_SubgroupID == 0u) route(t, lane, gl_SubgroupSize);
  barrier();
  if (RANK != 0u && FIXED == 0u) route_ranks();
  const uint e = min(sel_e[j], EMAX - 1u);
  const float w = sel_w[j];
  // This workgroup's share of the shared expert's down: pairs [lo, hi) of (unit, h), index unit H + h, over the token's
  // K blocks workgroups (with at least as many workgroups as units, one unit per output at most).
  const uint nr = K * pc.blocks, r = j * pc.blocks + b, lo = (r * H * US) / nr, hi = ((r + 1u) * H * US) / nr;
  const bool raw_d = EARLY != 0u && TYPE_D >= HLQ_Q4_K, raw_s = EARLY != 0u && TYPE_SD >= HLQ_Q4_K;
  HlqRaw rw[raw_d ? NRH * UPW : 1u], rs[raw_s ? NRH : 1u];
  if (raw_d)
    [[unroll]] for (uint i = 0u; i < NRH; ++i) {
      const uint h = min(id + i * WG, H - 1u);
      [[unroll]] for (uint uu = 0u; uu < UPW; ++uu) down_raw(TYPE_D, 2u, e, h, b * UPW + uu, pc.rb_d, pc.F / 256u, rw[i * UPW + uu]);
    }
  if (raw_s)
    [[unroll]] for (uint i = 0u; i < NRH; ++i) {
      const uint h = id + i * WG, us = h < H ? shared_first(h, lo, hi, US) : US;
      rs[i].a = rs[i].b = rs[i].c = uvec4(0u);
      rs[i].e = uvec2(0u);
      if (us < US) down_raw(TYPE_SD, 3u, 0u, h, us, pc.rb_sd, pc.Fs / 256u, rs[i]);  // most outputs have none
    }
  const uint nsg = hl_num_subgroups(), last = f0 + ROWS - 1u;
  float ga[RPS], ua[RPS];
  swiglu_dots(TYPE_G, TYPE_U, 0u, 1u, pc.rb_g, pc.rb_u, e * pc.F, f0, last, xrow, lane, ga, ua);
  [[unroll]] for (uint q = 0u; q < RPS; ++q) {
    const uint rr = gl_SubgroupID + q * nsg;  // uniform per subgroup
    const float gs = subgroupAdd(ga[q]), us = subgroupAdd(ua[q]);
    if (rr < ROWS && subgroupElect()) hm4[rr / 4u][rr % 4u] = w * (gs / (1.0 + exp(-gs))) * us;
  }
  barrier();
  if ((DIAG_DOWN & 2u) != 0u) {
    if (id < ROWS) y[t * H + f0 + id] = hm4[id / 4u][id % 4u];
    return;
  }
#ifdef MB_X16
  // A K-quant down takes w h as 16-bit fixed point too: its runs staged once here (a unit's 32 products then 8 integer dot
  // products in every invocation instead of 32 conversions and multiply-adds).
  const bool dx16 = TYPE_D >= HLQ_Q4_K && TYPE_D <= HLQ_Q6_K;
  if (dx16) {  // uniform
    if (id < ROWS / 16u) {
      vec4 v[4];
      for (uint k = 0u; k < 4u; ++k) v[k] = hm4[4u * id + k];
      hlx_stage(2u * UH + id, v);
    }
    barrier();
  }
#else
  const bool dx16 = false;
#endif
  const float sgt = sg[t];
  [[unroll]] for (uint i = 0u; i < NRH; ++i) {
    const uint h = id + i * WG;
    if (h >= H) break;
    float acc = 0.0;
    [[unroll]] for (uint uu = 0u; uu < UPW; ++uu) {
      const uint u = b * UPW + uu;
      if (dx16) {
#ifdef MB_X16
        uvec4 lo, hi;
        vec4 ms;
        float bias;
        down_unit(TYPE_D, 2u, e, h, u, pc.rb_d, pc.F / 256u, raw_d, rw[raw_d ? i * UPW + uu : 0u], lo, hi, ms, bias);
        acc += hlx_unit_dot(lo, hi, ms, bias, 2u * UH + 2u * uu, 2u * UH + 2u * uu + 1u);
#endif
      } else {
        vec4 xv[8];
        for (uint k = 0u; k < 8u; ++k) xv[k] = hm4[8u * uu + k];
        acc += down_dot(TYPE_D, 2u, e, h, u, pc.rb_d, pc.F / 256u, xv, hlq_run_sums(xv), raw_d, rw[raw_d ? i * UPW + uu : 0u]);
      }
    }
    const float part = acc + sgt * shared_part(t, h, lo, hi, US, raw_s, rs[raw_s ? i : 0u]);
    if ((DIAG_DOWN & 1u) != 0u) y[t * H + h] = part;
    else atomicAdd(y[t * H + h], part);
  }
}
#endif
#endif
