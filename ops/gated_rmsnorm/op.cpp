// gated_rmsnorm: the Gated DeltaNet's output norm, rmsnorm(o) * gain * silu(z) per head.
// The op's signature, its reference variant and its Vulkan variants (README.md lists them).
#include "ops/gated_rmsnorm/reference.h"
#include "ops/registry.h"

namespace hl::gpu {

OpDef gated_rmsnorm_with_cases(OpDef d);  // cases.cpp: its cases, tolerance and goldens
void register_gated_rmsnorm_vulkan(Registry& r);  // vulkan.cpp

void register_gated_rmsnorm(Registry& r) {
  r.add_op(gated_rmsnorm_with_cases({"gated_rmsnorm", "o, z [T, n_v*d_v] -> each head: o / rms(o) * gain * silu(z)", {"o", "z"}, {"gain"}, {}, {"y"},
            {"eps"}}));
  r.add_variant(reference_variant("gated_rmsnorm", "the oracle (ops/gated_rmsnorm/reference.h), f32 on the host", [](VariantCtx& c, OpArgs& a) {
    a.set("y", Tensor::from(ref::gated_rmsnorm(a.in("o").f32(), a.in("z").f32(), c.weights->host_vec(a.weight("gain")),
                                               a.param("eps"))));
  }));
  register_gated_rmsnorm_vulkan(r);
}

}  // namespace hl::gpu
