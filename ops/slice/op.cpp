// slice: the same column range of every block of columns.
// The op's signature, its reference variant and its Vulkan variants (README.md lists them).
#include "ops/slice/reference.h"
#include "ops/registry.h"

namespace hl::gpu {

OpDef slice_with_cases(OpDef d);  // cases.cpp: its cases, tolerance and goldens
void register_slice_vulkan(Registry& r);  // vulkan.cpp

void register_slice(Registry& r) {
  r.add_op(slice_with_cases({"slice", "x [T, n*period] -> columns [offset, offset+width) of every block: y [T, n*width]", {"x"}, {}, {}, {"y"},
            {"period", "offset", "width"}}));
  r.add_variant(reference_variant("slice", "the oracle (ops/slice/reference.h), f32 on the host", [](VariantCtx&, OpArgs& a) {
    a.set("y", Tensor::from(ref::slice(a.in("x").f32(), a.iparam("period"), a.iparam("offset"), a.iparam("width"))));
  }));
  register_slice_vulkan(r);
}

}  // namespace hl::gpu
