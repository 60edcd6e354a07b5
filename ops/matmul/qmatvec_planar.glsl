// The body of qmatvec_planar*.comp: the decode mat-vec y[T, N] = x[T, K] wq[N, K]^T on Q6_K weights stored as
// planar rows (WeightStore::device_planar: each row's ql of every block, then qh, then scales, then d; rows at a
// 16-byte stride), so every lane's weight bytes come in aligned 16-byte loads.
//
// Why: in ggml's own layout a Q6_K block is 210 bytes, so every field after the first block is only 2-byte
// aligned and a lane needs five 4-byte loads for 16 bytes: the load instructions, not the bytes, bound the
// kernels that read that layout (reports/<device>/matmul.md, the lm_head cases).
// Planar, the same bytes are three 16-byte loads, one 8-byte and one 4-byte load per 64 values.
//
// A chunk is 64 values of a row: block b, half h, l0 = 0 or 16 (chunk c = 4b + 2h + l0/16), the four runs
// k = 0..3 of values 128h + 32k + l0 .. +15 with scales sc[8h + 2k + l0/16]. L lanes share a row (L a power of
// two, at most the subgroup), each always the same chunks, so its x stays in registers across rows (XR chunks;
// more chunks than that, or another subgroup size than the host planned for, reload x per row). A subgroup
// takes R groups of rows per pass, all their loads issued before any is decoded, and loads the next pass's
// while it decodes this one (bytes in flight).
//
// Define QMV_I8 for x rounded to 8 bits per 256 values (quantize_x8_k.comp) and 4-way integer dot products;
// QMV_X16 for x as 16-bit fixed point per run of 16 (each lane rounds its own chunks as it loads them, as
// ops/shaders/x16.glsl stages them: ~1e-5 relative, where 8 bits give ~5e-3) and two integer dot products per 4
// values; else the products are exact f32 (each 6-bit value turned into a float without a conversion instruction).
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const uint R = 2;   // row groups per subgroup pass
layout(constant_id = 2) const uint XR = 1;  // chunks of x per lane held in registers
#include "common.glsl"

#if defined(QMV_I8) || defined(QMV_X16)
#include "int_dot.glsl"
#endif
#ifdef QMV_I8
layout(std430, binding = 0) readonly buffer XQ { uvec4 xq4[]; };  // [T, K / 16]: 16 int8 values each
layout(std430, binding = 5) readonly buffer XD { float xd[]; };   // [T, K / 256]: scale per 256 values
layout(std430, binding = 6) readonly buffer XS { int xs[]; };     // [T, K / 16]: sum(q) per 16
#else
layout(std430, binding = 0) readonly buffer X { vec4 x4[]; };  // [T, K]
#endif
layout(std430, binding = 1) readonly buffer W4 { uvec4 w4[]; };  // planar rows (WeightStore::device_planar)
layout(std430, binding = 2) readonly buffer W2 { uvec2 w2[]; };  // the same buffer: scales
layout(std430, binding = 3) readonly buffer W1 { uint w1[]; };   // the same buffer: d
layout(std430, binding = 4) writeonly buffer Y { float y[]; };   // [T, N]
// stride: a row's 16-byte units; nb: blocks per row; lanes_p2: the next power of two of the chunks (4 nb).
layout(push_constant) uniform Push { uint T, K, N, stride, nb, lanes_p2; } pc;

#define HLQ_WORD(buf, i) w1[i]
#include "quant_blocks.glsl"
#ifdef QMV_I8
const uint TYPE = HLQ_Q6_K;
#include "quant_slots.glsl"
#endif

// x for one chunk of token t, in registers. QMV_I8: rounded to 8 bits with one scale per 256 values
// (quantize_x8_k.comp, as ggml's Q8_K for its k-quant dot products), so a lane's four runs share the scale and a
// row's chunk sums in integers: one int-to-float conversion (quarter rate on NVIDIA) per chunk, not per run.
#ifdef QMV_I8
struct XChunk {
  uvec4 q[4];  // the runs as int8, four per word
  ivec4 off;   // -32 * sum(q) per run: Q6_K's -32 applied on x's side
  float d;     // the block's scale
};
#elif defined(QMV_X16)
struct XChunk {
  uvec4 hi[4], lo[4];  // each run as 16-bit fixed point x = s (256 hi + lo), hi and lo signed bytes
  vec4 s, sum;         // per run: the step, and the f32 sum of its values (Q6_K's -32 applied on x's side)
};
#else
struct XChunk {
  vec4 v[16];
};
#endif
XChunk xr[XR];

void load_x(uint t, uint c, uint i) {
  const uint start = 256u * (c >> 2u) + 128u * ((c >> 1u) & 1u) + 16u * (c & 1u);  // run k at start + 32k
#ifdef QMV_I8
  const uint x16 = t * (pc.K >> 4u) + (start >> 4u);
  for (uint k = 0u; k < 4u; ++k) {
    xr[i].q[k] = xq4[x16 + 2u * k];
    xr[i].off[k] = -32 * xs[x16 + 2u * k];
  }
  xr[i].d = xd[x16 >> 4u];
#elif defined(QMV_X16)
  const uint x4i = t * (pc.K >> 2u) + (start >> 2u);
  for (uint k = 0u; k < 4u; ++k) {
    vec4 v[4];
    float amax = 0.0, sum = 0.0;
    for (uint j = 0u; j < 4u; ++j) {
      v[j] = x4[x4i + 8u * k + j];
      const vec4 a = abs(v[j]);
      amax = max(amax, max(max(a.x, a.y), max(a.z, a.w)));
      sum += (v[j].x + v[j].y) + (v[j].z + v[j].w);
    }
    const float inv = amax > 0.0 ? 32639.0 / amax : 0.0;
    for (uint j = 0u; j < 4u; ++j) {
      const ivec4 q = clamp(ivec4(round(v[j] * inv)), ivec4(-32639), ivec4(32639));
      const ivec4 h = (q + 128) >> 8, l = q - (h << 8);  // both in [-128, 127]
      const uvec4 hb = uvec4(h) & 0xFFu, lb = uvec4(l) & 0xFFu;
      xr[i].hi[k][j] = hb.x | (hb.y << 8u) | (hb.z << 16u) | (hb.w << 24u);
      xr[i].lo[k][j] = lb.x | (lb.y << 8u) | (lb.z << 16u) | (lb.w << 24u);
    }
    xr[i].s[k] = amax / 32639.0;
    xr[i].sum[k] = sum;
  }
#else
  const uint x4i = t * (pc.K >> 2u) + (start >> 2u);
  for (uint k = 0u; k < 4u; ++k)
    for (uint j = 0u; j < 4u; ++j) xr[i].v[4u * k + j] = x4[x4i + 8u * k + j];
#endif
}

// One chunk's weight bytes, as loaded.
struct WChunk {
  uvec4 qa, qb, qh;  // ql at 64h + l0 and 64h + 32 + l0, qh at 32h + l0
  uvec2 sc;          // scales 8h .. 8h + 7
  uint dw;           // the word holding d
};

WChunk load_w(uint row, uint c) {
  const uint b = c >> 2u, h = (c >> 1u) & 1u, l = c & 1u, r16 = row * pc.stride;
  WChunk w;
  w.qa = w4[r16 + 8u * b + 4u * h + l];
  w.qb = w4[r16 + 8u * b + 4u * h + 2u + l];
  w.qh = w4[r16 + 8u * pc.nb + 4u * b + 2u * h + l];
  w.sc = w2[2u * r16 + 24u * pc.nb + 2u * b + h];
  w.dw = w1[4u * r16 + 52u * pc.nb + (b >> 1u)];
  return w;
}

// sum over the chunk of d * sc[run] * (q - 32) * x.
float chunk_dot(WChunk w, uint c, XChunk x) {
  uvec4 q[4];
  hlq_q6k_runs(w.qa, w.qb, w.qh, q);
  const uint s = 8u * (c & 1u);  // sc[8h + 2k + l0/16]: byte 2k + l0/16 of the 8
#ifdef QMV_I8
  int acc = 0;  // |acc| < 4 * 128 * 16 * 127 * (63 + 32): no overflow
  for (uint k = 0u; k < 4u; ++k)
    acc += bitfieldExtract(int(k < 2u ? w.sc.x : w.sc.y), int(16u * (k & 1u) + s), 8) * (hlq_dot16(q[k], x.q[k]) + x.off[k]);
  return unpackHalf2x16(w.dw)[(c >> 2u) & 1u] * x.d * float(acc);
#elif defined(QMV_X16)
  float acc = 0.0;
  for (uint k = 0u; k < 4u; ++k) {  // |256 hi.q + lo.q| <= 16 * 63 * 32639: no overflow
    const int iq = 256 * hlq_dot16(q[k], x.hi[k]) + hlq_dot16(q[k], x.lo[k]);
    const float sc = float(bitfieldExtract(int(k < 2u ? w.sc.x : w.sc.y), int(16u * (k & 1u) + s), 8));
    acc += sc * (x.s[k] * float(iq) - 32.0 * x.sum[k]);
  }
  return unpackHalf2x16(w.dw)[(c >> 2u) & 1u] * acc;
#else
  float acc = 0.0;
  for (uint k = 0u; k < 4u; ++k) {
    const float sc = float(bitfieldExtract(int(k < 2u ? w.sc.x : w.sc.y), int(16u * (k & 1u) + s), 8));
    const float p = dot(hlq_bytes(q[k].x, 32.0), x.v[4u * k]) + dot(hlq_bytes(q[k].y, 32.0), x.v[4u * k + 1u]) +
                    dot(hlq_bytes(q[k].z, 32.0), x.v[4u * k + 2u]) + dot(hlq_bytes(q[k].w, 32.0), x.v[4u * k + 3u]);
    acc += sc * p;
  }
  return unpackHalf2x16(w.dw)[(c >> 2u) & 1u] * acc;
#endif
}

// The weights of a pass: row groups r0 + r G + sub (r < R), this lane's chunk slots i0 .. i0 + XR - 1; past the
// row's chunks (or rows) a repeat of the last, weighted 0 / not stored (no branch between the loads). Two sets
// (wa, wb: one loading while the other is decoded), picked by a constant argument (arrays sized by
// specialization constants cannot be copied or passed).
uint chunks, L, G, cl, sub;
WChunk wa[XR * R], wb[XR * R];
float acc[R];

void load_pass(bool into_b, uint r0, uint i0) {
  for (uint i = 0u; i < XR; ++i)
    for (uint r = 0u; r < R; ++r) {
      const WChunk w = load_w(min(r0 + r * G + sub, pc.N - 1u), min(cl + L * (i0 + i), chunks - 1u));
      if (into_b) wb[i * R + r] = w; else wa[i * R + r] = w;
    }
}

void dot_pass(bool from_b, uint i0) {
  for (uint i = 0u; i < XR; ++i) {
    const uint c = cl + L * (i0 + i), cc = min(c, chunks - 1u);
    for (uint r = 0u; r < R; ++r) {
      const float v = chunk_dot(from_b ? wb[i * R + r] : wa[i * R + r], cc, xr[i]);
      acc[r] += c < chunks ? v : 0.0;
    }
  }
}

void store_pass(uint t, uint r0) {
  for (uint r = 0u; r < R; ++r) {
    float s = acc[r];
    for (uint o = L >> 1u; o > 0u; o >>= 1u) s += subgroupShuffleXor(s, o);
    const uint row = r0 + r * G + sub;
    if (cl == 0u && row < pc.N) y[t * pc.N + row] = s;
    acc[r] = 0.0;
  }
}

void main() {
  chunks = 4u * pc.nb;
  L = min(gl_SubgroupSize, pc.lanes_p2);
  G = gl_SubgroupSize / L;
  cl = gl_SubgroupInvocationID % L;
  sub = gl_SubgroupInvocationID / L;
  for (uint r = 0u; r < R; ++r) acc[r] = 0.0;
  const uint per_lane = (chunks + L - 1u) / L;  // chunks cl, cl + L, ...
  const uint nsg = hl_num_subgroups();
  const uint first = (hl_group_index() * nsg + gl_SubgroupID) * R * G;
  const uint step = gl_NumWorkGroups.x * gl_NumWorkGroups.y * nsg * R * G;
  for (uint t = 0u; t < pc.T; ++t) {
    if (per_lane <= XR) {  // uniform: x stays in registers
      for (uint i = 0u; i < XR; ++i) load_x(t, min(cl + L * i, chunks - 1u), i);
      // Software pipelined, two passes per trip: the next pass's weights load while this pass's are decoded,
      // so a subgroup keeps loads in flight while it computes.
      load_pass(false, first, 0u);
      for (uint r0 = first; r0 < pc.N; r0 += 2u * step) {  // uniform per subgroup
        if (r0 + step < pc.N) load_pass(true, r0 + step, 0u);
        dot_pass(false, 0u);
        store_pass(t, r0);
        if (r0 + step >= pc.N) break;
        if (r0 + 2u * step < pc.N) load_pass(false, r0 + 2u * step, 0u);
        dot_pass(true, 0u);
        store_pass(t, r0 + step);
      }
    } else {  // x reloaded for each group of XR chunks of every row
      for (uint r0 = first; r0 < pc.N; r0 += step) {
        for (uint i0 = 0u; i0 < per_lane; i0 += XR) {
          for (uint i = 0u; i < XR; ++i) load_x(t, min(cl + L * (i0 + i), chunks - 1u), i);
          load_pass(false, r0, i0);
          dot_pass(false, i0);
        }
        store_pass(t, r0);
      }
    }
  }
}
