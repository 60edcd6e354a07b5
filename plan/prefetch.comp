// Decode prefetch (plan/prefetch.h), a device helper beside the ops, not an op; the body is ops/shaders/prefetch.glsl.
// Volatile loads: they stay although nothing reads what they load, and the dispatch writes nothing, so no dispatch
// waits for it but through the barrier that ends its level.
#version 450
#define HL_PREFETCH_QUALIFIER volatile
#include "prefetch.glsl"

void main() { prefetch_touch(); }
