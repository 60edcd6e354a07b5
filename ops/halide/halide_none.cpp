// Built when HYBRIDLAB_HALIDE is off: no Halide variants.
#include "ops/registry.h"

namespace hl::gpu {

void register_halide_variants(Registry&) {}

}  // namespace hl::gpu
