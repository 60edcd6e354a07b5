// x in shared memory as 16-bit fixed point per run of 16 values, for integer dot products with K-quant units
// (hlq_unit_packed's bytes): x = s (256 hi + lo), hi and lo signed bytes, s = max|x| / 32639 over the run (hi stays
// within a byte), with the run's f32 sum for the units' offsets (value = mul q - sub). Each x value is off by at most
// 2^-16 of its run's largest and the products are exact integers, so a row's dot product stays within ~1e-5 relative
// of the f32 one (8-bit x: ~5e-3), while a unit's 32 products take 8 dot instructions instead of 32 conversions and
// 32 multiply-adds. Include after quant_blocks.glsl with HLX_RUNS (runs staged) defined.
#ifndef HL_X16_GLSL
#define HL_X16_GLSL
#include "int_dot.glsl"

shared uvec4 hlx_hi[HLX_RUNS], hlx_lo[HLX_RUNS];
shared vec2 hlx_sd[HLX_RUNS];  // (s, the f32 sum of the run's values)

// Stages run r of the shared arrays from its 16 values v.
void hlx_stage(uint r, vec4 v[4]) {
  float amax = 0.0, sum = 0.0;
  for (uint k = 0u; k < 4u; ++k) {
    const vec4 a = abs(v[k]);
    amax = max(amax, max(max(a.x, a.y), max(a.z, a.w)));
    sum += (v[k].x + v[k].y) + (v[k].z + v[k].w);
  }
  const float inv = amax > 0.0 ? 32639.0 / amax : 0.0;
  uvec4 hw, lw;
  for (uint k = 0u; k < 4u; ++k) {
    const ivec4 q = clamp(ivec4(round(v[k] * inv)), ivec4(-32639), ivec4(32639));
    const ivec4 h = (q + 128) >> 8, l = q - (h << 8);  // both in [-128, 127]
    const uvec4 hb = uvec4(h) & 0xFFu, lb = uvec4(l) & 0xFFu;
    hw[k] = hb.x | (hb.y << 8u) | (hb.z << 16u) | (hb.w << 24u);
    lw[k] = lb.x | (lb.y << 8u) | (lb.z << 16u) | (lb.w << 24u);
  }
  hlx_hi[r] = hw;
  hlx_lo[r] = lw;
  hlx_sd[r] = vec2(amax / 32639.0, sum);
}

// One unit's sum of value * x: its lo and hi runs' bytes (q, below 128) against staged runs rl and rh; value =
// mul (q - bias) - sub per run, ms = (mul_lo, sub_lo, mul_hi, sub_hi) as hlq_unit_packed gives them.
float hlx_unit_dot(uvec4 lo, uvec4 hi, vec4 ms, float bias, uint rl, uint rh) {
  const int il = 256 * hlq_dot16(lo, hlx_hi[rl]) + hlq_dot16(lo, hlx_lo[rl]);
  const int ih = 256 * hlq_dot16(hi, hlx_hi[rh]) + hlq_dot16(hi, hlx_lo[rh]);
  const vec2 a = hlx_sd[rl], b = hlx_sd[rh];
  return (ms.x * (a.x * float(il)) - (ms.y + bias * ms.x) * a.y) + (ms.z * (b.x * float(ih)) - (ms.w + bias * ms.z) * b.y);
}

#endif
