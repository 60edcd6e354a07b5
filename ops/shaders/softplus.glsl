// softplus(x) for the GDN decay gates (ssm_gates.comp, gdn_prep.comp): #include "softplus.glsl".
#ifndef HL_SOFTPLUS_GLSL
#define HL_SOFTPLUS_GLSL

// log(1 + e) for e in [0, 1] as 2 atanh(s), s = e / (2 + e) <= 1/3: an odd series in s that needs no
// log(), whose accuracy the Vulkan spec leaves loose near 1 (absolute, not relative, error bound).
float log1p01(float e) {
  const float s = e / (2.0 + e), s2 = s * s;
  float p = 1.0 / 17.0;
  for (int n = 15; n >= 1; n -= 2) p = p * s2 + 1.0 / float(n);
  return 2.0 * s * p;  // truncation error < s^18 / 19, far below f32 rounding
}

// torch's softplus (threshold 20), as max(x, 0) + log1p(exp(-|x|)): exact to rounding on both sides.
float softplus(float x) { return x > 20.0 ? x : max(x, 0.0) + log1p01(exp(-abs(x))); }

#endif
