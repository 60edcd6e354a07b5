// Slots of quantized weight rows for the 8-bit integer dot-product kernels (qmatvec_i8_staged.comp): a row is cut
// into slots of 64 values (K-quants: a quarter of a 256-value block; Q8_0: one 32-value block), each slot
// RUNS runs of 16 values with one multiplier and one offset per run (value = mul * q - off), q as bytes.
// Include after quant_blocks.glsl (HLQ_WORD(buf, i) defined) with TYPE a constant.
#ifndef HL_QUANT_SLOTS_GLSL
#define HL_QUANT_SLOTS_GLSL
#include "int_dot.glsl"

const uint HLQ_RUNS = TYPE == HLQ_Q8_0 ? 2u : 4u;

uint hlq_slots(uint cols) { return TYPE == HLQ_Q8_0 ? cols / 32u : cols / 64u; }

// Where the runs of slot s start in the row (in values): what they meet in x.
uvec4 hlq_slot_starts(uint s) {
  if (TYPE == HLQ_Q8_0) return uvec4(32u * s, 32u * s + 16u, 32u * s, 32u * s);  // runs 2, 3 unused
  const uint blk = s >> 2u, j = s & 3u;
  if (TYPE == HLQ_Q4_K || TYPE == HLQ_Q5_K) return 256u * blk + 64u * j + uvec4(0u, 16u, 32u, 48u);
  return 256u * blk + 128u * (j >> 1u) + 16u * (j & 1u) + uvec4(0u, 32u, 64u, 96u);
}

// A Q4_K / Q5_K slot's words as loaded, nothing decoded (hlq_slot_raw), and their decode (hlq_slot_unpack): a kernel
// can load the next step's slots while it computes on this one. Block { f16 d, dmin; u8 scales[12]; (Q5_K: u8 qh[32];)
// u8 qs[128] }: slot j of a block holds values 64j .. 64j + 63, sub-block 2j (low nibbles of qs[32j ..]) then 2j + 1
// (high nibbles); Q5_K adds bit 2j (2j + 1) of qh[l] as bit 4. head: d, dmin and the scales; a, c: the slot's 32 qs
// bytes; h0, h1: Q5_K's qh.
struct HlqSlotRaw { uvec4 head, a, c, h0, h1; };

void hlq_slot_raw(uint buf, uint row, uint s, out HlqSlotRaw r) {
  const uint b = row + (TYPE == HLQ_Q5_K ? 176u : 144u) * (s >> 2u), j = s & 3u;
  r.head = hlq_load16(TYPE, buf, b);
  r.a = hlq_load16(TYPE, buf, b + (TYPE == HLQ_Q5_K ? 48u : 16u) + 32u * j);
  r.c = hlq_load16(TYPE, buf, b + (TYPE == HLQ_Q5_K ? 64u : 32u) + 32u * j);
  r.h0 = r.h1 = uvec4(0u);
  if (TYPE == HLQ_Q5_K) {
    r.h0 = hlq_load16(TYPE, buf, b + 16u);
    r.h1 = hlq_load16(TYPE, buf, b + 32u);
  }
}

void hlq_slot_unpack(HlqSlotRaw r, uint s, out uvec4 q[4], out vec4 mul, out vec4 off) {
  const uint j = s & 3u;
  const vec2 dm = unpackHalf2x16(r.head.x);
  const uvec2 lo = hlq_scale_min_k4(r.head.yzw, 2u * j), hi = hlq_scale_min_k4(r.head.yzw, 2u * j + 1u);
  q[0] = r.a & 0x0F0F0F0Fu;
  q[1] = r.c & 0x0F0F0F0Fu;
  q[2] = (r.a >> 4u) & 0x0F0F0F0Fu;
  q[3] = (r.c >> 4u) & 0x0F0F0F0Fu;
  if (TYPE == HLQ_Q5_K) {
    q[0] |= ((r.h0 >> (2u * j)) & 0x01010101u) << 4u;
    q[1] |= ((r.h1 >> (2u * j)) & 0x01010101u) << 4u;
    q[2] |= ((r.h0 >> (2u * j + 1u)) & 0x01010101u) << 4u;
    q[3] |= ((r.h1 >> (2u * j + 1u)) & 0x01010101u) << 4u;
  }
  mul = vec4(dm.x * float(lo.x), dm.x * float(lo.x), dm.x * float(hi.x), dm.x * float(hi.x));
  off = vec4(dm.y * float(lo.y), dm.y * float(lo.y), dm.y * float(hi.y), dm.y * float(hi.y));
}

// Slot s of the row starting at byte `row` of weight source buf (a constant): the quantized values of its runs as
// bytes (q[r]) and each run's multiplier and offset.
void hlq_slot(uint buf, uint row, uint s, out uvec4 q[4], out vec4 mul, out vec4 off) {
  if (TYPE == HLQ_Q8_0) {  // { f16 d; i8 qs[32] }: value d * q, signed bytes as they are
    const uint b = row + 34u * s;
    const float d = hlq_f16(buf, b);
    q[0] = hlq_load16(TYPE, buf, b + 2u);
    q[1] = hlq_load16(TYPE, buf, b + 18u);
    q[2] = q[3] = uvec4(0u);
    mul = vec4(d);
    off = vec4(0.0);
    return;
  }
  const uint blk = s >> 2u, j = s & 3u;
  if (TYPE == HLQ_Q4_K || TYPE == HLQ_Q5_K) {
    HlqSlotRaw r;
    hlq_slot_raw(buf, row, s, r);
    hlq_slot_unpack(r, s, q, mul, off);
    return;
  }
  // Q6_K { u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d }: value 128h + 32k + l = d * sc[8h + 2k + l/16] * (q - 32),
  // q = nibble (k >= 2) of ql[64h + 32(k%2) + l] | bits 2k, 2k+1 of qh[32h + l] as bits 4, 5. Slot j = 2h + (l >= 16):
  // the four runs k = 0..3 of 16 values l .. l + 15.
  const uint b = row + 210u * blk, h = j >> 1u, l0 = 16u * (j & 1u);
  const uvec4 qa = hlq_load16(TYPE, buf, b + 64u * h + l0), qb = hlq_load16(TYPE, buf, b + 64u * h + 32u + l0),
              qh = hlq_load16(TYPE, buf, b + 128u + 32u * h + l0);
  hlq_q6k_runs(qa, qb, qh, q);
  const float d = hlq_f16(buf, b + 208u);
  const uint si = b + 192u + 8u * h + (j & 1u);
  for (uint k = 0u; k < 4u; ++k) mul[k] = d * hlq_i8(buf, si + 2u * k);
  off = 32.0 * mul;
}

// One slot's share of a row's dot product with x: x's runs as 8-bit values xq, their scales xd and
// scale * sum(q) xs (quantize_x8.comp), so sum(value * x) = mul * xd * (q . xq) - off * xs per run.
float hlq_slot_dot(uvec4 q[4], vec4 mul, vec4 off, uvec4 xq[4], vec4 xd, vec4 xs) {
  float a = 0.0;
  for (uint r = 0u; r < HLQ_RUNS; ++r) a += mul[r] * xd[r] * float(hlq_dot16(q[r], xq[r])) - off[r] * xs[r];
  return a;
}

#endif
