// Decoding ggml block rows (reference/quant/blocks.h) read as 32-bit words: shared by every kernel that
// reads quantized weights directly (raw rows as uploaded by WeightStore::device_raw). No 8/16-bit storage
// is needed: bytes are cut out of words.
//
// Before including, define HLQ_WORD(buf, i): word i of weight source `buf` (for example
// `#define HLQ_WORD(buf, i) wq[i]`, or a switch over several buffers). Call the functions with the type
// and buf as constants (specialization constants or literals): everything inlines and the type switches
// fold away.
//
// A row is cut into units of 32 values, each two runs of 16 consecutive values ("lo" and "hi", not
// adjacent in K-quants); hlq_unit_runs gives where they sit in the row, hlq_unit decodes them:
//   value = mul * q - sub  per run, q an exact small integer held as a float (F16/F32: q is the value).
// Types (ggml ids): F32 0, F16 1, Q8_0 8, Q4_K 12, Q5_K 13, Q6_K 14. Rows must hold whole units
// (cols % 32 == 0; K-quants: cols % 256 == 0) and start on a 4-byte boundary where the type's row bytes
// are a multiple of 4; Q8_0 (34-byte blocks) and Q6_K (210) only need 2-byte alignment.
#ifndef HL_QUANT_BLOCKS_GLSL
#define HL_QUANT_BLOCKS_GLSL

const uint HLQ_F32 = 0u, HLQ_F16 = 1u, HLQ_Q8_0 = 8u, HLQ_Q4_K = 12u, HLQ_Q5_K = 13u, HLQ_Q6_K = 14u;

uint hlq_units_per_block(uint type) { return type >= HLQ_Q4_K ? 8u : 1u; }  // F16/F32: a "block" is one unit

uint hlq_block_bytes(uint type) {
  switch (type) {
    case HLQ_F32: return 128u;
    case HLQ_F16: return 64u;
    case HLQ_Q8_0: return 34u;
    case HLQ_Q4_K: return 144u;
    case HLQ_Q5_K: return 176u;
    default: return 210u;  // Q6_K
  }
}

// Every field starts on a 4-byte boundary (block bytes a multiple of 4): plain word loads suffice.
bool hlq_word_aligned(uint type) { return type != HLQ_Q8_0 && type != HLQ_Q6_K; }

// Row offsets (in values) of unit u's lo and hi runs.
uvec2 hlq_unit_runs(uint type, uint u) {
  const uint b = u / hlq_units_per_block(type), j = u % hlq_units_per_block(type);
  if (type == HLQ_Q4_K || type == HLQ_Q5_K) {  // (group j/2 of 64 values, half j%2): nibbles of 16 qs bytes
    const uint lo = 256u * b + 64u * (j >> 1u) + 16u * (j & 1u);
    return uvec2(lo, lo + 32u);
  }
  if (type == HLQ_Q6_K) {  // (half j/4 of 128, ql half (j/2)%2, 16 of 32): nibbles of 16 ql bytes
    const uint lo = 256u * b + 128u * (j >> 2u) + 32u * ((j >> 1u) & 1u) + 16u * (j & 1u);
    return uvec2(lo, lo + 64u);
  }
  return uvec2(32u * u, 32u * u + 16u);
}

uint hlq_u8(uint buf, uint byte) { return (HLQ_WORD(buf, byte >> 2u) >> (8u * (byte & 3u))) & 0xFFu; }
uint hlq_u16(uint buf, uint byte) { return (HLQ_WORD(buf, byte >> 2u) >> (8u * (byte & 2u))) & 0xFFFFu; }  // 2-aligned
float hlq_f16(uint buf, uint byte) { return unpackHalf2x16(hlq_u16(buf, byte)).x; }
float hlq_i8(uint buf, uint byte) { return float(int(hlq_u8(buf, byte) << 24u) >> 24); }

// 16 bytes from `byte` (4-aligned for word-aligned types, else 2-aligned: then a fifth word supplies the
// upper half of the last one, with constant 16-bit shifts; buffers carry spare words for that read).
// Define HLQ_UVEC4(buf, i) (16-byte unit i of the source) to read word-aligned types' 16 bytes in one load:
// their 16-byte fields sit on 16-byte boundaries when rows do (row bytes of Q4_K and Q5_K are multiples of 16).
uvec4 hlq_load16(uint type, uint buf, uint byte) {
#ifdef HLQ_UVEC4
  if (hlq_word_aligned(type)) return HLQ_UVEC4(buf, byte >> 4u);
#endif
  const uint i = byte >> 2u;
  const uvec4 w = uvec4(HLQ_WORD(buf, i), HLQ_WORD(buf, i + 1u), HLQ_WORD(buf, i + 2u), HLQ_WORD(buf, i + 3u));
  if (hlq_word_aligned(type)) return w;
  const uvec4 n = uvec4(w.yzw, HLQ_WORD(buf, i + 4u));
  return (byte & 2u) == 0u ? w : (w >> 16u) | (n << 16u);
}

// The four bytes of w as floats, minus bias, exactly: 2^23 + b has b in its low mantissa bits, which spares
// the integer-to-float conversions (quarter rate on NVIDIA).
vec4 hlq_bytes(uint w, float bias) {
  return uintBitsToFloat((uvec4(w, w >> 8u, w >> 16u, w >> 24u) & 0xFFu) | 0x4B000000u) - (8388608.0 + bias);
}

// Q6_K's 6-bit values of 16 consecutive l as bytes, for the four runs k = 0..3 of one half h of a block (value
// 128h + 32k + l): the nibble (k >= 2) of ql[64h + 32(k%2) + l] with bits 2k, 2k+1 of qh[32h + l] as bits 4, 5.
// qa, qb: the 16 bytes of ql at 64h + l0 and 64h + 32 + l0; qh: those of qh at 32h + l0.
void hlq_q6k_runs(uvec4 qa, uvec4 qb, uvec4 qh, out uvec4 q[4]) {
  q[0] = (qa & 0x0F0F0F0Fu) | ((qh & 0x03030303u) << 4u);
  q[1] = (qb & 0x0F0F0F0Fu) | (((qh >> 2u) & 0x03030303u) << 4u);
  q[2] = ((qa >> 4u) & 0x0F0F0F0Fu) | (((qh >> 4u) & 0x03030303u) << 4u);
  q[3] = ((qb >> 4u) & 0x0F0F0F0Fu) | (((qh >> 6u) & 0x03030303u) << 4u);
}

// Byte i (0..11) of a K-quant's 12 scale bytes, and ggml's get_scale_min_k4 for sub-block j (0..7).
uint hlq_scale_byte(uvec3 s, uint i) { return ((i < 4u ? s.x : i < 8u ? s.y : s.z) >> (8u * (i & 3u))) & 0xFFu; }
uvec2 hlq_scale_min_k4(uvec3 s, uint j) {
  if (j < 4u) return uvec2(hlq_scale_byte(s, j) & 63u, hlq_scale_byte(s, j + 4u) & 63u);
  return uvec2((hlq_scale_byte(s, j + 4u) & 15u) | ((hlq_scale_byte(s, j - 4u) >> 6u) << 4u),
               (hlq_scale_byte(s, j + 4u) >> 4u) | ((hlq_scale_byte(s, j) >> 6u) << 4u));
}

// A K-quant unit's words as loaded, nothing decoded yet (hlq_unit_raw), and their decode (hlq_unit_unpack), so that
// a kernel can issue one pass of loads while it computes on the pass before. Q6_K's 16-byte fields sit on 2-byte
// boundaries: five words each (a, e.x and b, e.y), aligned in the decode; c holds Q5_K's qh, or Q6_K's d and scale words.
struct HlqRaw { uvec4 a, b, c; uvec2 e; };

void hlq_unit_raw(uint type, uint buf, uint row, uint u, out HlqRaw r) {
  const uint j = u % hlq_units_per_block(type), b = row + (u / hlq_units_per_block(type)) * hlq_block_bytes(type);
  r.c = uvec4(0u);
  r.e = uvec2(0u);
  if (type == HLQ_Q4_K || type == HLQ_Q5_K) {
    const uint g = j >> 1u, l0 = 16u * (j & 1u);
    r.a = hlq_load16(type, buf, b);  // d, dmin and the 12 scale bytes
    r.b = hlq_load16(type, buf, b + (type == HLQ_Q5_K ? 48u : 16u) + 32u * g + l0);
    if (type == HLQ_Q5_K) r.c = hlq_load16(type, buf, b + 16u + l0);
  } else {  // Q6_K
    const uint h = j >> 2u, kk = (j >> 1u) & 1u, l0 = 16u * (j & 1u);
    const uint ql = (b + 64u * h + 32u * kk + l0) >> 2u, qh = (b + 128u + 32u * h + l0) >> 2u;
    const uint si = (b + 192u + 8u * h + 2u * kk + (l0 >> 4u)) >> 2u;
    r.a = uvec4(HLQ_WORD(buf, ql), HLQ_WORD(buf, ql + 1u), HLQ_WORD(buf, ql + 2u), HLQ_WORD(buf, ql + 3u));
    r.b = uvec4(HLQ_WORD(buf, qh), HLQ_WORD(buf, qh + 1u), HLQ_WORD(buf, qh + 2u), HLQ_WORD(buf, qh + 3u));
    r.e = uvec2(HLQ_WORD(buf, ql + 4u), HLQ_WORD(buf, qh + 4u));
    r.c = uvec4(HLQ_WORD(buf, (b + 208u) >> 2u), HLQ_WORD(buf, si), HLQ_WORD(buf, si + 1u), 0u);
  }
}

// Chunk columns (WeightStore::device_chunk_columns): a group of rows stored chunk by chunk, each 16-byte chunk of a
// block (blocks padded to whole chunks) followed by the same chunk of the group's next row, so that neighbouring rows'
// units lie in neighbouring 16 bytes. hlq_unit_raw's words of K-quant unit j (0..7) of the block whose chunk 0 is at
// byte `blk` (16-aligned), its chunks `cs` bytes apart; decoded by hlq_unit_unpack(type, 0u, j, ...). Every field of a
// unit lies within one chunk at its offset in the block (Q6_K: ql in chunks 0-7, qh 8-11, the scales 12, d 13).
uint hlq_chunks_per_block(uint type) { return (hlq_block_bytes(type) + 15u) / 16u; }

void hlq_unit_raw_columns(uint type, uint buf, uint blk, uint cs, uint j, out HlqRaw r) {
  r.c = uvec4(0u);
  r.e = uvec2(0u);  // the fields are aligned: no fifth words
  if (type == HLQ_Q4_K || type == HLQ_Q5_K) {
    const uint g = j >> 1u, l = j & 1u;
    r.a = hlq_load16(type, buf, blk);
    r.b = hlq_load16(type, buf, blk + ((type == HLQ_Q5_K ? 3u : 1u) + 2u * g + l) * cs);
    if (type == HLQ_Q5_K) r.c = hlq_load16(type, buf, blk + (1u + l) * cs);
  } else {  // Q6_K, its chunks 4-aligned here: loaded as a word-aligned type's
    const uint h = j >> 2u, kk = (j >> 1u) & 1u, l = j & 1u, si = ((blk + 12u * cs) >> 2u) + ((8u * h + 2u * kk + l) >> 2u);
    r.a = hlq_load16(HLQ_Q4_K, buf, blk + (4u * h + 2u * kk + l) * cs);
    r.b = hlq_load16(HLQ_Q4_K, buf, blk + (8u + 2u * h + l) * cs);
    r.c = uvec4(HLQ_WORD(buf, (blk + 13u * cs) >> 2u), HLQ_WORD(buf, si), HLQ_WORD(buf, si + 1u), 0u);
  }
}

// 16 bytes from five words w, e read at byte & ~3 (byte 2-aligned).
uvec4 hlq_align16(uvec4 w, uint e, uint byte) {
  return (byte & 2u) == 0u ? w : (w >> 16u) | (uvec4(w.yzw, e) << 16u);
}

// hlq_unit_raw's words of unit u of the row at byte `row`, decoded as hlq_unit_packed gives them.
void hlq_unit_unpack(uint type, uint row, uint u, HlqRaw r, out uvec4 lo, out uvec4 hi, out vec4 ms, out float bias) {
  const uint j = u % hlq_units_per_block(type), b = row + (u / hlq_units_per_block(type)) * hlq_block_bytes(type);
  bias = 0.0;
  if (type == HLQ_Q4_K || type == HLQ_Q5_K) {
    // { f16 d, dmin; u8 scales[12]; (Q5_K: u8 qh[32];) u8 qs[128] }: value 64g + 32h + l is nibble h of
    // qs[32g + l] (Q5_K: plus bit 2g + h of qh[l] as bit 4), sub-block 2g + h.
    const uint g = j >> 1u;
    const vec2 dm = unpackHalf2x16(r.a.x);
    const uvec3 sc = r.a.yzw;
    const uvec2 a = hlq_scale_min_k4(sc, 2u * g), c = hlq_scale_min_k4(sc, 2u * g + 1u);
    ms = vec4(dm.x * float(a.x), dm.y * float(a.y), dm.x * float(c.x), dm.y * float(c.y));
    lo = r.b & 0x0F0F0F0Fu;
    hi = (r.b >> 4u) & 0x0F0F0F0Fu;
    if (type == HLQ_Q5_K) {
      lo |= ((r.c >> (2u * g)) & 0x01010101u) << 4u;
      hi |= ((r.c >> (2u * g + 1u)) & 0x01010101u) << 4u;
    }
  } else {
    // Q6_K { u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d }: value 128h + 32k + l = d * sc[8h + 2k + l/16] * (q - 32),
    // q = nibble (k >= 2) of ql[64h + 32(k%2) + l] | bits 2k.. of qh[32h + l] << 4. lo: k = kk, hi: k = kk + 2.
    const uint h = j >> 2u, kk = (j >> 1u) & 1u, l0 = 16u * (j & 1u);
    const uvec4 ql = hlq_align16(r.a, r.e.x, b), qh = hlq_align16(r.b, r.e.y, b);
    lo = (ql & 0x0F0F0F0Fu) | (((qh >> (2u * kk)) & 0x03030303u) << 4u);
    hi = ((ql >> 4u) & 0x0F0F0F0Fu) | (((qh >> (2u * kk + 4u)) & 0x03030303u) << 4u);
    const float d = unpackHalf2x16((r.c.x >> (8u * ((b + 208u) & 2u))) & 0xFFFFu).x;
    const uint sh = 8u * ((b + 192u + 8u * h + 2u * kk + (l0 >> 4u)) & 3u);
    ms = vec4(d * float(int((r.c.y >> sh) << 24u) >> 24), 0.0, d * float(int((r.c.z >> sh) << 24u) >> 24), 0.0);
    bias = 32.0;
  }
}

// Unit u of a block-type row (Q8_0, K-quants) starting at byte `row`, still packed: the lo and hi runs' 16 bytes
// each (value = mul * (byte - bias) - sub per run), and ms = (mul_lo, sub_lo, mul_hi, sub_hi) formed as ggml forms
// them (d * sc, dmin * m). For kernels that unpack a few values at a time (fewer live registers).
void hlq_unit_packed(uint type, uint buf, uint row, uint u, out uvec4 lo, out uvec4 hi, out vec4 ms, out float bias) {
  if (type == HLQ_Q4_K || type == HLQ_Q5_K || type == HLQ_Q6_K) {
    HlqRaw r;
    hlq_unit_raw(type, buf, row, u, r);
    hlq_unit_unpack(type, row, u, r, lo, hi, ms, bias);
  } else {
    // Q8_0 { f16 d; i8 qs[32] }: value d * q; bytes biased by 128 (xor) to read them unsigned.
    const uint b = row + u * hlq_block_bytes(type);
    const float d = hlq_f16(buf, b);
    lo = hlq_load16(type, buf, b + 2u) ^ 0x80808080u;
    hi = hlq_load16(type, buf, b + 18u) ^ 0x80808080u;
    ms = vec4(d, 0.0, d, 0.0);
    bias = 128.0;
  }
}

// A packed unit's bytes (hlq_unit_packed, hlq_unit_unpack) as hlq_unit's q: byte - bias, exactly, lo run then hi run.
void hlq_unit_bytes(uvec4 lo, uvec4 hi, float bias, out vec4 q[8]) {
  for (uint k = 0u; k < 4u; ++k) {
    q[k] = hlq_bytes(lo[k], bias);
    q[k + 4u] = hlq_bytes(hi[k], bias);
  }
}

// Unit u of the row starting at byte `row`: q[0..3] the lo run, q[4..7] the hi run, and
// ms = (mul_lo, sub_lo, mul_hi, sub_hi) with mul and sub formed as ggml forms them (d * sc, dmin * m).
void hlq_unit(uint type, uint buf, uint row, uint u, out vec4 q[8], out vec4 ms) {
  if (type == HLQ_F16 || type == HLQ_F32) {  // the values themselves, 16 bytes at a time (16-aligned: whole units)
    const uint b = row + u * hlq_block_bytes(type);
    if (type == HLQ_F16) {
      for (uint k = 0u; k < 4u; ++k) {
        const uvec4 w = hlq_load16(type, buf, b + 16u * k);
        q[2u * k] = vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
        q[2u * k + 1u] = vec4(unpackHalf2x16(w.z), unpackHalf2x16(w.w));
      }
    } else {
      for (uint k = 0u; k < 8u; ++k) q[k] = uintBitsToFloat(hlq_load16(type, buf, b + 16u * k));
    }
    ms = vec4(1.0, 0.0, 1.0, 0.0);
    return;
  }
  uvec4 lo, hi;
  float bias;
  hlq_unit_packed(type, buf, row, u, lo, hi, ms, bias);
  hlq_unit_bytes(lo, hi, bias, q);
}

// The 32 dequantized values, bit-exact to reference/quant/blocks.cpp (precise: no fused multiply-add).
void hlq_dequant(vec4 q[8], vec4 ms, out vec4 v[8]) {
  for (uint k = 0u; k < 4u; ++k) {
    precise vec4 a = ms.x * q[k] - ms.y;
    precise vec4 b = ms.z * q[k + 4u] - ms.w;
    v[k] = a;
    v[k + 4u] = b;
  }
}

// (sum of x over the lo run, over the hi run), for hlq_unit_dot; x[0..3] lo, x[4..7] hi.
vec2 hlq_run_sums(vec4 x[8]) {
  return vec2(dot(x[0] + x[1] + x[2] + x[3], vec4(1.0)), dot(x[4] + x[5] + x[6] + x[7], vec4(1.0)));
}

// sum over the unit of value * x, factored per run: mul * (q . x) - sub * sum(x) (one multiply-add per value;
// the run sums are shared by every row decoded against the same x).
float hlq_unit_dot(vec4 q[8], vec4 ms, vec4 x[8], vec2 xs) {
  const float lo = dot(q[0], x[0]) + dot(q[1], x[1]) + dot(q[2], x[2]) + dot(q[3], x[3]);
  const float hi = dot(q[4], x[4]) + dot(q[5], x[5]) + dot(q[6], x[6]) + dot(q[7], x[7]);
  return (ms.x * lo - ms.y * xs.x) + (ms.z * hi - ms.w * xs.y);
}

#endif
