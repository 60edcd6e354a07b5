// add: the residual add, y = a + b.
// The op's signature, its reference variant and its Vulkan variants (README.md lists them).
#include "ops/registry.h"

namespace hl::gpu {

OpDef add_with_cases(OpDef d);  // cases.cpp: its cases, tolerance and goldens
void register_add_vulkan(Registry& r);  // vulkan.cpp

using M = Mat<float>;

void register_add(Registry& r) {
  r.add_op(add_with_cases({"add", "residual add: y = a + b", {"a", "b"}, {}, {}, {"y"}, {}}));
  r.add_variant(reference_variant("add", "the oracle (Eigen a + b), f32 on the host", [](VariantCtx&, OpArgs& a) { a.set("y", Tensor::from(M(a.in("a").f32() + a.in("b").f32()))); }));
  register_add_vulkan(r);
}

}  // namespace hl::gpu
