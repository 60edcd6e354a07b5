// rope: NeoX rotary position embedding of the first R dims of every head.
// The op's signature, its reference variant and its Vulkan variants (README.md lists them).
#include "ops/rope/reference.h"
#include "ops/registry.h"

namespace hl::gpu {

OpDef rope_with_cases(OpDef d);  // cases.cpp: its cases, tolerance and goldens
void register_rope_vulkan(Registry& r);  // vulkan.cpp

void register_rope(Registry& r) {
  r.add_op(rope_with_cases({"rope", "x [T, heads*D]: NeoX rotation of dims [0, R) at positions pos0 + t", {"x"}, {}, {}, {"y"},
            {"head_dim", "rot_dims", "theta", "pos0"}, /*live=*/true}));
  r.add_variant(reference_variant("rope", "the oracle (ops/rope/reference.h), f32 on the host", [](VariantCtx&, OpArgs& a) {
    a.set("y", Tensor::from(ref::rope(a.in("x").f32(), int(a.iparam("head_dim")), int(a.iparam("rot_dims")), a.param("theta"),
                                      a.iparam("pos0"))));
  }));
  register_rope_vulkan(r);
}

}  // namespace hl::gpu
