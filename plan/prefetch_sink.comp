// Decode prefetch (plan/prefetch.h) with plain loads: the touched words' xor is written to a sink of its own (binding 9)
// only when it equals a push constant the compiler cannot know, so the loads stay and are ordinary cached loads (the
// volatile kind, plan/prefetch.comp, may be served and kept differently by the caches).
#version 450
#define HL_PREFETCH_QUALIFIER
#include "prefetch.glsl"

layout(std430, binding = 9) writeonly buffer Sink { uint sink[]; };  // [WG]

void main() {
  const uint acc = prefetch_touch();
  if (acc == pc.never) sink[gl_LocalInvocationID.x] = acc;
}
