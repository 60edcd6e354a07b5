// moe_block_add_rmsnorm: its cases, at test, quick and full scale, which its tests and the moe experiment run: moe_block's
// (ops/moe_block/cases.cpp) with a residual and a gain added.
#include "ops/cases.h"

namespace hl::gpu {

OpDef moe_block_with_cases(OpDef d);  // ops/moe_block/cases.cpp

// moe_block's tolerance (its routes must agree), then a norm that scales by the row's RMS: relative errors carry over.
OpDef moe_block_add_rmsnorm_with_cases(OpDef d) {
  d.cases = [](Scale s) { return with_add_norm(moe_block_with_cases({}).cases(s), "hidden", "res", 2); };
  d.tolerance = moe_block_with_cases({}).tolerance;
  return d;
}

}  // namespace hl::gpu
