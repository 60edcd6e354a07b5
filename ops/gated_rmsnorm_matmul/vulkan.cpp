// gated_rmsnorm_matmul on Vulkan: vulkan:fused_decode, matmul's qmatvec_direct dispatch built as qmatvec_direct_gnorm.comp:
// every workgroup stages o * gain * silu(z) where it would stage x and scales each unit's products by its head's
// 1 / rms(o) (ops/matmul/qmatvec_direct.glsl, QMV_GNORM).
#include "ops/gated_rmsnorm_matmul/fused.h"
#include "ops/matmul/quant_rows.h"

namespace hl::gpu {

// Declared in fused.h.
bool gated_rmsnorm_matmul_fused_takes(const WeightRef& w, int64_t dv) { return gated_norm_fits(w, dv); }

namespace {

void fused_decode(VariantCtx& c, OpArgs& a) {
  const std::string what = "gated_rmsnorm_matmul vulkan:fused_decode";
  const Tensor &o = a.in("o"), &z = a.in("z");
  const WeightRef& w = a.weight("w");
  const Tensor gain = c.weights->device(a.weight("gain"));
  const int64_t dv = gain.numel();
  if (z.rows() != o.rows() || z.cols() != o.cols() || dv <= 0 || o.cols() % dv)
    fail("{}: o [{}, {}], z [{}, {}] and gain [{}] do not fit heads of the gain's width", what, o.rows(), o.cols(), z.rows(),
         z.cols(), dv);
  if (!gated_norm_fits(w, dv))
    fail("{}: weight '{}' ({} [{}, {}]) is not ggml blocks or rows whose units lie within heads of {} columns", what,
         w.name(), quant::type_name(w.storage_type()), w.rows, w.cols, dv);
  const HeadGatedNorm gated{z, gain, u32(dv), float(a.param("eps"))};
  a.set("y", qmatvec_direct_group(c, o, {w}, "gated_rmsnorm_matmul", what, nullptr, &gated).at(0));
}

}  // namespace

void register_gated_rmsnorm_matmul_vulkan(Registry& r) {
  Variant v = vulkan_variant("gated_rmsnorm_matmul", "vulkan:fused_decode",
                             "decode: matmul's qmatvec_direct dispatch, every workgroup staging o * gain * silu(z) instead "
                             "of x and scaling each unit's products by its head's 1 / rms(o)",
                             fused_decode, /*family_default=*/false);
  // Not *=vulkan's: in the H100's decode stream it ties the norm in gdn_decode's step (README.md).
  v.status = "experimental";
  // matmul's qmatvec_direct tunables, its own (x_global does not apply: the row is staged). Hopper: a row per subgroup
  // pass as matmul's plain projections (in the H100's decode stream 16.0 us per call against 18.4 at 2 rows, 24.3 at 4).
  v.tunables = {{"gated_rmsnorm_matmul.qmatvec_direct.wg", 256},
                {"gated_rmsnorm_matmul.qmatvec_direct.rows", 2, {{"nvidia-hopper", 1}}},
                {"gated_rmsnorm_matmul.qmatvec_direct.units", 1}, {"gated_rmsnorm_matmul.qmatvec_direct.groups", 0},
                {"gated_rmsnorm_matmul.qmatvec_direct.x16", 1}};
  v.precision_tolerance = kX16Tolerance;  // x16: the gated row as 16-bit fixed point
  r.add_variant(std::move(v));
}

}  // namespace hl::gpu
