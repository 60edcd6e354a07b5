// Decoding a weight unit (a ggml unit: 32 values, two runs of 16) into shared f16 tiles, shared by the quantized GEMMs
// on cooperative matrices (qgemm_cm.glsl: workgroup tiles; route_warp_cm.glsl: a tile per subgroup). Before
// including, declare the shared tiles ws0, ws1 of QG_WT (GATED: ws1 is up's), HLQ_WORD / HLQ_UVEC4 over the weight
// buffers, and include quant_blocks.glsl. A unit lands in f16vec4s [at, at + 8) of its tile in its own value order:
// the low run, then the high run. With QG_PERM defined, each quad's middle values swap (values 0, 2, 1, 3): the Q4_K
// decode then takes two nibbles 16 bits apart with one mask; A must be staged the same way (QG_PERM4), so the
// products over K are unchanged.
#ifndef HL_QGEMM_STAGE_GLSL
#define HL_QGEMM_STAGE_GLSL

#define QG_UMAX 4  // units of one row run held in registers at most
#ifdef QG_PERM
#define QG_PERM4(v) ((v).xzyw)
#else
#define QG_PERM4(v) (v)
#endif

// Quad k of a unit's low half (values 4k..4k+3) and of its high half (16 + 4k..).
// QG_STORE_DIAG (qgemm_cm.glsl's DIAG 256): at lane-contiguous addresses instead (no bank conflicts, values misplaced).
void store_halves(uint buf, uint at, uint k, QG_WT l, QG_WT h) {
  uint i0 = at + k, i1 = at + 4u + k;
#ifdef QG_STORE_DIAG
  if (QG_STORE_DIAG) {
    i0 = (gl_LocalInvocationID.x + 2u * k * WG) % (BN * KP);
    i1 = (gl_LocalInvocationID.x + (2u * k + 1u) * WG) % (BN * KP);
  }
#endif
  if (buf == 0u) {
    ws0[i0] = l;
    ws0[i1] = h;
  } else {
    ws1[i0] = l;
    ws1[i1] = h;
  }
}

// Q4_K unit u of the row at byte `row`: its block's head (d, dmin, the 12 scale bytes) and its 16 bytes of nibbles,
// as loaded (q4k_decode works from registers, so a step's loads can be issued before the previous step's products).
void q4k_raw(uint buf, uint row, uint u, out uvec4 head, out uvec4 qs) {
  const uint j = u % 8u, b = row + (u / 8u) * 144u;
  head = hlq_load16(HLQ_Q4_K, buf, b);
  qs = hlq_load16(HLQ_Q4_K, buf, b + 16u + 32u * (j >> 1u) + 16u * (j & 1u));
}

// In packed f16 arithmetic: two nibbles at a time into the halves of a word as f16 1024 + q or 64 + q (exact), minus that,
// times the run's scale minus its min: about one instruction per value. The scale and min are rounded to f16 first
// (within the kernel's f16 tolerance). A zero head decodes to zeros (rows past N).
void q4k_decode(uint buf, uint u, uvec4 head, uvec4 qs, uint at) {
  const uint g = (u % 8u) >> 1u;
  const vec2 dm = unpackHalf2x16(head.x);
  const uvec2 sa = hlq_scale_min_k4(head.yzw, 2u * g), sb = hlq_scale_min_k4(head.yzw, 2u * g + 1u);
  const f16vec2 s_lo = f16vec2(dm.x * float(sa.x)), m_lo = f16vec2(dm.y * float(sa.y));
  const f16vec2 s_hi = f16vec2(dm.x * float(sb.x)), m_hi = f16vec2(dm.y * float(sb.y));
  const f16vec2 k1024 = f16vec2(1024.0);
#ifdef QG_PERM
  // A high nibble stays in mantissa bits 4..7 under f16 64's exponent: 64 + q (exact), so one shift serves a word.
  const f16vec2 k64 = f16vec2(64.0);
  [[unroll]] for (uint k = 0u; k < 4u; ++k) {  // bytes 0 and 2, then 1 and 3, of each nibble half
    const uint w = qs[k], w8 = w >> 8u;
    const f16vec2 l0 = unpackFloat2x16((w & 0x000F000Fu) | 0x64006400u) - k1024;
    const f16vec2 l1 = unpackFloat2x16((w8 & 0x000F000Fu) | 0x64006400u) - k1024;
    const f16vec2 h0 = unpackFloat2x16((w & 0x00F000F0u) | 0x54005400u) - k64;
    const f16vec2 h1 = unpackFloat2x16((w8 & 0x00F000F0u) | 0x54005400u) - k64;
    const f16vec4 l = f16vec4(l0 * s_lo - m_lo, l1 * s_lo - m_lo), h = f16vec4(h0 * s_hi - m_hi, h1 * s_hi - m_hi);
    store_halves(buf, at, k, QG_WT(l), QG_WT(h));
  }
  return;
#endif
  [[unroll]] for (uint k = 0u; k < 4u; ++k) {
    const uint w = qs[k];
    const f16vec2 l0 = unpackFloat2x16((w & 0x0000000Fu) | ((w & 0x00000F00u) << 8u) | 0x64006400u) - k1024;
    const f16vec2 l1 = unpackFloat2x16(((w >> 16u) & 0x0000000Fu) | ((w >> 8u) & 0x000F0000u) | 0x64006400u) - k1024;
    const f16vec2 h0 = unpackFloat2x16(((w >> 4u) & 0x0000000Fu) | ((w << 4u) & 0x000F0000u) | 0x64006400u) - k1024;
    const f16vec2 h1 = unpackFloat2x16(((w >> 20u) & 0x0000000Fu) | ((w >> 12u) & 0x000F0000u) | 0x64006400u) - k1024;
    const f16vec4 l = f16vec4(l0 * s_lo - m_lo, l1 * s_lo - m_lo), h = f16vec4(h0 * s_hi - m_hi, h1 * s_hi - m_hi);
    store_halves(buf, at, k, QG_WT(l), QG_WT(h));
  }
}

// A packed unit's bytes (hlq_unit_packed, hlq_unit_unpack: lo and hi runs, ms = (mul_lo, sub_lo, mul_hi, sub_hi), bias)
// into f16vec4s [at, at + 8) of tile buf. On matrices, in packed f16 arithmetic: bytes 0 and 2, then 1 and 3, of a word
// into the halves of one as f16 1024 + q (exact below 1024), minus 1024 + bias, times mul minus sub (both rounded to
// f16 first, as the Q4_K decode does); the scalar kernels keep f32 (q8_0 and f32 rows stay exact there).
void stage_bytes(uint buf, uvec4 lo, uvec4 hi, vec4 ms, float bias, uint at) {
#ifndef QG_SCALAR
  const f16vec2 kb = f16vec2(1024.0 + bias), ml = f16vec2(ms.x), sl = f16vec2(ms.y), mh = f16vec2(ms.z), sh = f16vec2(ms.w);
  [[unroll]] for (uint k = 0u; k < 4u; ++k) {
    const f16vec2 l02 = unpackFloat2x16((lo[k] & 0x00FF00FFu) | 0x64006400u) - kb;
    const f16vec2 l13 = unpackFloat2x16(((lo[k] >> 8u) & 0x00FF00FFu) | 0x64006400u) - kb;
    const f16vec2 h02 = unpackFloat2x16((hi[k] & 0x00FF00FFu) | 0x64006400u) - kb;
    const f16vec2 h13 = unpackFloat2x16(((hi[k] >> 8u) & 0x00FF00FFu) | 0x64006400u) - kb;
#ifdef QG_PERM
    const f16vec4 l = f16vec4(l02 * ml - sl, l13 * ml - sl), h = f16vec4(h02 * mh - sh, h13 * mh - sh);
#else
    const f16vec4 l = f16vec4(l02 * ml - sl, l13 * ml - sl).xzyw, h = f16vec4(h02 * mh - sh, h13 * mh - sh).xzyw;
#endif
    store_halves(buf, at, k, QG_WT(l), QG_WT(h));
  }
#else
  [[unroll]] for (uint k = 0u; k < 4u; ++k) {
    const QG_WT l = QG_WT(QG_PERM4(ms.x * hlq_bytes(lo[k], bias) - ms.y)), h = QG_WT(QG_PERM4(ms.z * hlq_bytes(hi[k], bias) - ms.w));
    store_halves(buf, at, k, l, h);
  }
#endif
}

// Unit u of weight row `row` (byte offset) of buffer buf, decoded into f16vec4s [at, at + 8) of its tile in the
// unit's value order (lo run, then hi run), four values at a time (few live registers beside the accumulators).
void stage_unit(uint type, uint buf, bool ok, uint row, uint u, uint at) {
  if (!ok) {
    [[unroll]] for (uint i = 0u; i < 8u; ++i) {
      if (buf == 0u) ws0[at + i] = QG_WT(0.0);
      else ws1[at + i] = QG_WT(0.0);
    }
    return;
  }
  if (type == HLQ_F16 || type == HLQ_F32) {
    vec4 q[8], ms;
    hlq_unit(type, buf, row, u, q, ms);
    [[unroll]] for (uint i = 0u; i < 8u; ++i) {
      if (buf == 0u) ws0[at + i] = QG_WT(QG_PERM4(q[i]));
      else ws1[at + i] = QG_WT(QG_PERM4(q[i]));
    }
    return;
  }
  if (type == HLQ_Q4_K) {
    uvec4 head, qs;
    q4k_raw(buf, row, u, head, qs);
    q4k_decode(buf, u, head, qs, at);
    return;
  }
  uvec4 lo, hi;
  vec4 ms;
  float bias;
  hlq_unit_packed(type, buf, row, u, lo, hi, ms, bias);
  stage_bytes(buf, lo, hi, ms, bias, at);
}

// A K-quant unit's raw words (hlq_unit_raw, of weight 0), decoded into f16vec4s [at, at + 8) as stage_unit does (the
// row's zero words, past N, decode to zeros).
void stage_raw(HlqRaw r, uint row, uint u, uint at) {
  uvec4 lo, hi;
  vec4 ms;
  float bias;
  hlq_unit_unpack(TYPE0, row, u, r, lo, hi, ms, bias);
  stage_bytes(0u, lo, hi, ms, bias, at);
}

// A Q4_K row run: units [u0, u0 + QG_U) of the weight row at byte `row` of buffer buf, all in one block (QG_U divides
// 8): the block head once and the units' 16-byte loads (contiguous in the block), for q4k_decode; zeros where !ok.
void q4k_run_load(uint buf, uint row, bool ok, uint u0, out uvec4 head, out uvec4 qs[QG_UMAX]) {
  head = uvec4(0u);
  [[unroll]] for (uint uu = 0u; uu < QG_UMAX; ++uu) qs[uu] = uvec4(0u);
  if (!ok) return;
  const uint blk = row + (u0 / 8u) * 144u;
  head = hlq_load16(HLQ_Q4_K, buf, blk);
  [[unroll]] for (uint uu = 0u; uu < QG_UMAX; ++uu)
    if (uu < QG_U) qs[uu] = hlq_load16(HLQ_Q4_K, buf, blk + 16u + 16u * ((u0 + uu) % 8u));
}

// The same from chunk columns (qgemm_cm.glsl COLS): the block's chunk 0 (d, dmin, scales) at byte blk, its chunks cs
// bytes apart, unit j's 16 bytes in chunk 1 + j.
void q4k_run_load_cols(uint buf, uint blk, uint cs, bool ok, uint u0, out uvec4 head, out uvec4 qs[QG_UMAX]) {
  head = uvec4(0u);
  [[unroll]] for (uint uu = 0u; uu < QG_UMAX; ++uu) qs[uu] = uvec4(0u);
  if (!ok) return;
  head = hlq_load16(HLQ_Q4_K, buf, blk);
  [[unroll]] for (uint uu = 0u; uu < QG_UMAX; ++uu)
    if (uu < QG_U) qs[uu] = hlq_load16(HLQ_Q4_K, buf, blk + (1u + (u0 + uu) % 8u) * cs);
}

// Unit j (0..7) of the K-quant block at byte blk of chunk columns (chunks cs bytes apart), decoded into f16vec4s
// [at, at + 8) of tile buf as stage_unit does; zeros where !ok.
void stage_unit_cols(uint type, uint buf, bool ok, uint blk, uint cs, uint j, uint at) {
  HlqRaw r;
  r.a = r.b = r.c = uvec4(0u);
  r.e = uvec2(0u);
  if (ok) hlq_unit_raw_columns(type, buf, blk, cs, j, r);
  if (type == HLQ_Q4_K) {  // a zero head decodes to zeros
    q4k_decode(buf, j, r.a, r.b, at);
    return;
  }
  uvec4 lo, hi;
  vec4 ms;
  float bias;
  hlq_unit_unpack(type, 0u, j, r, lo, hi, ms, bias);  // zero words: ms 0, zeros
  stage_bytes(buf, lo, hi, ms, bias, at);
}

#endif
