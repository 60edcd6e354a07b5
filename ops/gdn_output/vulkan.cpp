// gdn_output on Vulkan: vulkan:fused_decode, ssm_scan_columns.comp with its gated-norm epilogue (a workgroup per
// whole value head writes y instead of o): the scan and the norm in one dispatch.
#include "ops/ssm_scan/vulkan_common.h"

namespace hl::gpu {

namespace {

void fused_decode(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const ScanShape sh = ssm_scan_shape(a);
  const Tensor& z = a.in("z");
  const WeightRef& gain = a.weight("gain");
  if (z.rows() != sh.T || z.cols() != sh.nv * sh.dv || gain.rows * gain.cols != sh.dv)
    fail("gdn_output vulkan:fused_decode: z [{}, {}] and gain [{}, {}] do not fit o [{}, {}] of {}-wide heads", z.rows(),
         z.cols(), gain.rows, gain.cols, sh.T, sh.nv * sh.dv, sh.dv);
  if (uint64_t(sh.dv) > d.info().max_workgroup_invocations)
    fail("gdn_output vulkan:fused_decode: value heads of {} exceed the device's {} invocations per workgroup", sh.dv,
         d.info().max_workgroup_invocations);
  const ScanNorm norm{z, c.weights->device(gain), float(a.param("eps"))};
  a.set("y", ssm_scan_columns(d, a, "gdn_output.fused_decode.", false, &norm));
}

}  // namespace

void register_gdn_output_vulkan(Registry& r) {
  Variant v = vulkan_variant("gdn_output", "vulkan:fused_decode",
                             "the scan with the gated norm as its epilogue, one dispatch: a workgroup per value head keeps "
                             "its state in registers (as ssm_scan's block_resident) and writes the head's gated norm",
                             fused_decode, true);
  v.status = "default";
  // Invocations per state column (a power of two; capped so the head fits one workgroup); tokens staged at a time;
  // partial sums per dot product (ssm_scan_columns.glsl's ACC, gdn_decode's too).
  v.tunables = {{"gdn_output.fused_decode.split", 4, {{"nvidia-hopper", 8}}}, {"gdn_output.fused_decode.stage", 16},
                 {"gdn_output.fused_decode.contig", 0}, {"gdn_output.fused_decode.acc", 1}};
  r.add_variant(std::move(v));
}

}  // namespace hl::gpu
