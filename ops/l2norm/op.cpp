// l2norm: L2 normalisation of every head (the Gated DeltaNet's q and k).
// The op's signature, its reference variant and its Vulkan variants (README.md lists them).
#include "ops/l2norm/reference.h"
#include "ops/registry.h"

namespace hl::gpu {

OpDef l2norm_with_cases(OpDef d);  // cases.cpp: its cases, tolerance and goldens
void register_l2norm_vulkan(Registry& r);  // vulkan.cpp

void register_l2norm(Registry& r) {
  r.add_op(l2norm_with_cases({"l2norm", "x [T, n*d] -> each group of d: x * rsqrt(sum x^2 + eps) * scale", {"x"}, {}, {}, {"y"},
            {"head_dim", "scale", "eps"}}));
  r.add_variant(reference_variant("l2norm", "the oracle (ops/l2norm/reference.h), f32 on the host", [](VariantCtx&, OpArgs& a) {
    a.set("y", Tensor::from(ref::l2norm(a.in("x").f32(), int(a.iparam("head_dim")), float(a.param("scale")), a.param("eps"))));
  }));
  register_l2norm_vulkan(r);
}

}  // namespace hl::gpu
