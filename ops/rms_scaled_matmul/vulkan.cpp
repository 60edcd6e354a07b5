// rms_scaled_matmul on Vulkan: vulkan:fused_decode, matmul's qmatvec_direct dispatch built as qmatvec_direct_rms.comp:
// every workgroup stages x as the plain kernel does and forms each head's 1 / rms from its partial sums beside it; each
// unit's products are multiplied by its head's factor (ops/matmul/qmatvec_direct.glsl, QMV_RMS).
#include "ops/matmul/quant_rows.h"
#include "ops/rms_scaled_matmul/fused.h"

namespace hl::gpu {

// Declared in fused.h.
bool rms_scaled_matmul_fused_takes(const WeightRef& w, int64_t d) { return head_scale_fits(w, d); }

namespace {

void fused_decode(VariantCtx& c, OpArgs& a) {
  const std::string what = "rms_scaled_matmul vulkan:fused_decode";
  const Tensor &x = a.in("x"), &ss = a.in("sumsq");
  const WeightRef& w = a.weight("w");
  const int64_t parts = a.iparam("parts"), heads = parts > 0 ? ss.cols() / parts : 0;
  if (parts <= 0 || heads <= 0 || ss.cols() % parts || ss.rows() != x.rows() || x.cols() % heads)
    fail("{}: sums of squares [{}, {}] in {} parts per head do not fit x [{}, {}]", what, ss.rows(), ss.cols(), parts, x.rows(),
         x.cols());
  const int64_t d = x.cols() / heads;
  if (!head_scale_fits(w, d))
    fail("{}: weight '{}' ({} [{}, {}]) is not ggml blocks or rows whose units lie within heads of {} columns", what, w.name(),
         quant::type_name(w.storage_type()), w.rows, w.cols, d);
  const HeadRmsScale rms{ss, u32(d), u32(parts), float(a.param("eps"))};
  a.set("y", qmatvec_direct_group(c, x, {w}, "rms_scaled_matmul", what, nullptr, &rms).at(0));
}

}  // namespace

void register_rms_scaled_matmul_vulkan(Registry& r) {
  Variant v = vulkan_variant("rms_scaled_matmul", "vulkan:fused_decode",
                             "decode: matmul's qmatvec_direct dispatch, x staged as it is, each head's 1 / rms formed from its "
                             "partial sums beside the staging and multiplying its units' products",
                             fused_decode, /*family_default=*/true);
  v.status = "default";
  // matmul's qmatvec_direct tunables, its own (x_global does not apply: the heads' factors are staged). Hopper: a row per
  // subgroup pass, as matmul's decode projections.
  v.tunables = {{"rms_scaled_matmul.qmatvec_direct.wg", 256},
                {"rms_scaled_matmul.qmatvec_direct.rows", 2, {{"nvidia-hopper", 1}}},
                {"rms_scaled_matmul.qmatvec_direct.units", 1}, {"rms_scaled_matmul.qmatvec_direct.groups", 0},
                {"rms_scaled_matmul.qmatvec_direct.x16", 1}};
  v.precision_tolerance = kX16Tolerance;  // x16: x as 16-bit fixed point
  r.add_variant(std::move(v));
}

}  // namespace hl::gpu
