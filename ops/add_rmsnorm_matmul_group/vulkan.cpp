// add_rmsnorm_matmul_group on Vulkan: vulkan:fused_decode, matmul_group's qmatvec_direct dispatch built as
// qmatvec_direct_norm.comp: every workgroup stages rmsnorm(x + a) * gain where it would stage x, workgroup 0 writes
// x + a (ops/matmul/qmatvec_direct.glsl, QMV_NORM).
#include "ops/matmul/quant_rows.h"
#include "ops/matmul_group/group.h"

namespace hl::gpu {

OpArgs add_rmsnorm_matmul_group_projections(const OpArgs& a, const Tensor& x);  // op.cpp

namespace {

void fused_decode(VariantCtx& c, OpArgs& a) {
  const std::string what = "add_rmsnorm_matmul_group vulkan:fused_decode";
  const OpArgs g = add_rmsnorm_matmul_group_projections(a, a.in("x"));
  const std::vector<WeightRef> ws = matmul_group_weights(g, what);
  if (!matmul_group_takes(ws)) fail("{}: its weights must be f32, f16 or ggml blocks of whole 32-value units", what);
  HeadAddNorm head{a.in("a"), c.weights->device(a.weight("gain")), float(a.param("eps")), {}};
  const auto ys = qmatvec_direct_group(c, a.in("x"), ws, "add_rmsnorm_matmul_group", what, &head);
  a.set("s", head.s);
  for (size_t i = 0; i < ys.size(); ++i) a.set(fmt::format("y{}", i), ys[i]);
}

}  // namespace

void register_add_rmsnorm_matmul_group_vulkan(Registry& r) {
  Variant v = vulkan_variant("add_rmsnorm_matmul_group", "vulkan:fused_decode",
                             "decode: matmul_group's qmatvec_direct dispatch, every workgroup staging (x + a) * gain "
                             "instead of x, 1/rms applied at the store; workgroup 0 writes x + a",
                             fused_decode, /*family_default=*/true);
  v.status = "default";
  // matmul_group's qmatvec_direct tunables, its own (x_global does not apply: the row is staged). Hopper: 3 rows per
  // subgroup pass, a third fewer workgroups each staging the normed row (in the H200's decode stream 18.95-18.96 us per
  // call against 21.18 at 2 rows, tg128 291.2-292.9 against 285.2-288.7: reports/nvidia-h200/decode-instream.md).
  v.tunables = {{"add_rmsnorm_matmul_group.qmatvec_direct.wg", 256},
                {"add_rmsnorm_matmul_group.qmatvec_direct.rows", 2, {{"nvidia-hopper", 3}}},
                {"add_rmsnorm_matmul_group.qmatvec_direct.units", 1}, {"add_rmsnorm_matmul_group.qmatvec_direct.groups", 0},
                {"add_rmsnorm_matmul_group.qmatvec_direct.x16", 1}};
  v.precision_tolerance = kX16Tolerance;  // x16: the row as 16-bit fixed point
  r.add_variant(std::move(v));
}

}  // namespace hl::gpu
