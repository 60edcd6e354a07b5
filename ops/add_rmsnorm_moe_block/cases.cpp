// add_rmsnorm_moe_block: its cases, at test, quick and full scale, which its tests run: moe_block's
// (ops/moe_block/cases.cpp, x the residual) with the addend a and a gain.
#include "ops/cases.h"

namespace hl::gpu {

OpDef moe_block_with_cases(OpDef d);  // ops/moe_block/cases.cpp

// moe_block's tolerance (its routes must agree) on a normed row: relative errors carry over.
OpDef add_rmsnorm_moe_block_with_cases(OpDef d) {
  d.cases = [](Scale s) { return with_add_norm(moe_block_with_cases({}).cases(s), "hidden", "a", 1); };
  d.tolerance = moe_block_with_cases({}).tolerance;
  return d;
}

}  // namespace hl::gpu
