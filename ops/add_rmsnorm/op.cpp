// add_rmsnorm: the residual add and the RMSNorm after it, as one op (y = x + a, n = rmsnorm(y)).
// The op's signature, its reference variant and its Vulkan variants (README.md lists them).
#include "ops/rmsnorm/reference.h"
#include "ops/registry.h"

namespace hl::gpu {

OpDef add_rmsnorm_with_cases(OpDef d);  // cases.cpp: its cases, tolerance and goldens
void register_add_rmsnorm_vulkan(Registry& r);  // vulkan.cpp

using M = Mat<float>;

void register_add_rmsnorm(Registry& r) {
  r.add_op(add_rmsnorm_with_cases({"add_rmsnorm",
            "x, a [T, n*G] (and optionally b, a second addend) -> y = x + a, or x + (a + b) (the residual stream), "
            "n = rmsnorm(y) with gain (G = len(gain))",
            {"x", "a"}, {"gain"}, {}, {"y", "n"}, {"eps"}, /*live=*/false, /*parts=*/{"add", "rmsnorm"}}));
  r.add_variant(reference_variant("add_rmsnorm", "the oracle (Eigen x + a (or x + (a + b)), then ops/rmsnorm/reference.h), f32 on the host", [](VariantCtx& c, OpArgs& a) {
    // With b: a + b first, then x + that (the order of the unfused ops: add(a, b), then the residual add).
    M y = a.t.count("b") ? M(a.in("x").f32() + M(a.in("a").f32() + a.in("b").f32())) : M(a.in("x").f32() + a.in("a").f32());
    a.set("n", Tensor::from(ref::rmsnorm(y, c.weights->host_vec(a.weight("gain")), a.param("eps"))));
    a.set("y", Tensor::from(std::move(y)));
  }));
  register_add_rmsnorm_vulkan(r);
}

}  // namespace hl::gpu
