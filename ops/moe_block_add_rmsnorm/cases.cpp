// moe_block_add_rmsnorm: its cases, at test, quick and full scale, which its tests and the moe experiment run: moe_block's
// (ops/moe_block/cases.cpp) with a residual and a gain added.
#include "ops/cases.h"

namespace hl::gpu {

OpDef moe_block_with_cases(OpDef d);  // ops/moe_block/cases.cpp

namespace {

std::vector<Case> cases(Scale s) {
  OpDef block = moe_block_with_cases({});
  std::vector<Case> v = block.cases(s);
  for (Case& c : v) {
    const auto inputs = c.inputs;
    const int64_t H = int64_t(c.shape.at("hidden")), T = int64_t(c.shape.at("T"));
    c.cost.bytes += 4.0 * double(3 * T * H + H);  // the residual read, the norm written, the gain
    c.inputs = [=](std::mt19937_64& g) {
      OpArgs a = inputs(g);
      a.set("res", Tensor::from(randn(g, T, H)));
      a.w.emplace("gain", weight("gain", randn(g, 1, H, 0.2, 1.0)));
      a.p["eps"] = 1e-6;
      return a;
    };
  }
  return v;
}

}  // namespace

// moe_block's tolerance (its routes must agree), then a norm that scales by the row's RMS: relative errors carry over.
OpDef moe_block_add_rmsnorm_with_cases(OpDef d) {
  d.cases = cases;
  d.tolerance = moe_block_with_cases({}).tolerance;
  return d;
}

}  // namespace hl::gpu
