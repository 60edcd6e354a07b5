// The NeoX rotation angle of position p for one frequency, in radians: F is the frequency in turns per position as a
// 64-bit fixed-point fraction (low, high words; ops/rope/freq_table.h). p * F mod 2^64 in exact integer arithmetic
// is the angle's fraction of a turn, reduced to [-1/2, 1/2) before it becomes a float: positions reach 262144, where
// a float p * inv_freq would be off by ~0.02 rad. Shared by rope.comp and the fused decode attention.
#ifndef HL_ROPE_ANGLE_GLSL
#define HL_ROPE_ANGLE_GLSL

float hl_rope_angle(uint p, uvec2 F) {
  uint hi, lo;
  umulExtended(p, F.x, hi, lo);
  hi += p * F.y;  // mod 2^32: whole turns drop out
  const float turns = float(int(hi)) * 2.3283064e-10 + float(lo) * 5.421011e-20;  // 2^-32, 2^-64
  return turns * 6.2831855;
}

#endif
