// Decode prefetch's body (plan/prefetch.comp, plan/prefetch_sink.comp; plan/prefetch.h): touches one word per STEP
// words of up to eight buffer ranges (grid y: which one), so that the op that reads them next finds their lines in the
// device's last-level cache. Binding 0 is bound and never read: the stream places the dispatch one level past the
// dispatch that wrote it (runtime/device.h), beside that tensor's consumers. Define HL_PREFETCH_QUALIFIER (volatile or
// nothing) before including.
#ifndef HL_PREFETCH_GLSL
#define HL_PREFETCH_GLSL
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const uint STEP = 8;  // words from one touched word to the next: a 32-byte sector
layout(constant_id = 2) const uint PER = 4;   // words touched per invocation, their loads issued together

layout(std430, binding = 0) readonly buffer After { uint after_[]; };
layout(std430, binding = 1) HL_PREFETCH_QUALIFIER readonly buffer B0 { uint b0[]; };
layout(std430, binding = 2) HL_PREFETCH_QUALIFIER readonly buffer B1 { uint b1[]; };
layout(std430, binding = 3) HL_PREFETCH_QUALIFIER readonly buffer B2 { uint b2[]; };
layout(std430, binding = 4) HL_PREFETCH_QUALIFIER readonly buffer B3 { uint b3[]; };
layout(std430, binding = 5) HL_PREFETCH_QUALIFIER readonly buffer B4 { uint b4[]; };
layout(std430, binding = 6) HL_PREFETCH_QUALIFIER readonly buffer B5 { uint b5[]; };
layout(std430, binding = 7) HL_PREFETCH_QUALIFIER readonly buffer B6 { uint b6[]; };
layout(std430, binding = 8) HL_PREFETCH_QUALIFIER readonly buffer B7 { uint b7[]; };
// Each range's first word and words (0: unused); never: a value the touched words' xor is compared with.
layout(push_constant) uniform Push { uint first[8], words[8]; uint never; } pc;

uint prefetch_word(uint b, uint i) {
  switch (b) {
    case 0u: return b0[i];
    case 1u: return b1[i];
    case 2u: return b2[i];
    case 3u: return b3[i];
    case 4u: return b4[i];
    case 5u: return b5[i];
    case 6u: return b6[i];
    default: return b7[i];
  }
}

// The xor of this invocation's touched words.
uint prefetch_touch() {
  const uint b = gl_WorkGroupID.y, n = pc.words[b];
  uint acc = 0u;
  [[unroll]] for (uint u = 0u; u < PER; ++u) {
    // A subgroup touches neighbouring sectors: its loads of one u cover a contiguous run.
    const uint i = ((gl_WorkGroupID.x * PER + u) * WG + gl_LocalInvocationID.x) * STEP;
    if (i < n) acc ^= prefetch_word(b, pc.first[b] + i);
  }
  return acc;
}

#endif
