// add_rmsnorm_matmul_group: its cases, at test, quick and full scale, which its tests run: matmul_group's
// (ops/matmul_group/cases.cpp, x the residual) with the addend a and a gain.
#include "ops/cases.h"

namespace hl::gpu {

OpDef matmul_group_with_cases(OpDef d);  // ops/matmul_group/cases.cpp

// matmul_group's tolerance (dot products in another order) on a normed row: relative errors carry over.
OpDef add_rmsnorm_matmul_group_with_cases(OpDef d) {
  d.cases = [](Scale s) { return with_add_norm(matmul_group_with_cases({}).cases(s), "in", "a", 1); };
  d.tolerance = matmul_group_with_cases({}).tolerance;
  return d;
}

}  // namespace hl::gpu
