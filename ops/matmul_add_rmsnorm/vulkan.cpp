// matmul_add_rmsnorm on Vulkan: vulkan:fused_decode, matmul's qmatvec_direct with the residual add and rmsnorm run by its
// last workgroup (ops/matmul/qmatvec_direct_tail.comp, ops/shaders/tail_add_rmsnorm.glsl).
#include "ops/matmul/quant_rows.h"

namespace hl::gpu {

// Whether vulkan:fused_decode reads this weight (the plan executor folds only then; declared in fused.h).
bool matmul_add_rmsnorm_fused_takes(const WeightRef& w) { return vk_quant_decodes(w) && w.cols % 4 == 0; }

namespace {

void fused_decode(VariantCtx& c, OpArgs& a) {
  const WeightRef& w = a.weight("w");
  const std::string what = "matmul_add_rmsnorm vulkan:fused_decode";
  if (!matmul_add_rmsnorm_fused_takes(w))
    fail("{}: weight '{}' is {} [{}, {}]; this variant reads f32, f16, q8_0, q4_K, q5_K or q6_K rows of whole 32-value "
         "units", what, w.name(), quant::type_name(w.storage_type()), w.rows, w.cols);
  TailAddNorm tail{a.in("x"), c.weights->device(a.weight("gain")), float(a.param("eps")), {}, {}};
  // matmul's qmatvec_direct tunables: the same kernel as the unfused projection's.
  qmatvec_direct_group(c, a.in("h"), {w}, "matmul", what, &tail);
  a.set("y", tail.s);
  a.set("n", tail.n);
}

}  // namespace

void register_matmul_add_rmsnorm_vulkan(Registry& r) {
  Variant v = vulkan_variant("matmul_add_rmsnorm", "vulkan:fused_decode",
                             "qmatvec_direct (matmul's tunables), then the residual add and rmsnorm by its last workgroup "
                             "(a ticket counter): one dispatch",
                             fused_decode);
  v.precision_tolerance = kX16Tolerance;  // matmul.qmatvec_direct.x16: x as 16-bit fixed point
  r.add_variant(std::move(v));
}

}  // namespace hl::gpu
