// slice on Vulkan: vulkan:copy, one invocation per output element (slice.comp).
#include "ops/vulkan_variant.h"

namespace hl::gpu {

namespace {

void slice(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const Tensor& x = a.in("x");
  const int64_t period = a.iparam("period"), offset = a.iparam("offset"), width = a.iparam("width");
  if (period <= 0 || x.cols() % period || offset < 0 || width < 0 || offset + width > period)
    fail("slice: columns [{}, {}) of blocks of {} do not fit {} columns", offset, offset + width, period, x.cols());
  Tensor y = Tensor::device(d, x.rows(), x.cols() / period * width);
  struct {
    uint32_t n, out_cols, in_cols, period, offset, width;
  } pc{u32(y.numel()), u32(y.cols()), u32(x.cols()), u32(period), u32(offset), u32(width)};
  if (pc.n > 0) {
    const uint32_t wg = d.tune("slice.copy.wg");
    const Grid g = elements(pc.n, wg);
    d.dispatch(d.pipeline("slice", {{0, wg}}, 2, sizeof pc), {x.buffer(d), y.buffer_mut(d)}, pc, g.x, g.y);
  }
  a.set("y", y);
}

}  // namespace

void register_slice_vulkan(Registry& r) {
  Variant v = vulkan_variant("slice", "vulkan:copy", "one invocation per output element", slice, true);
  v.tunables = {{"slice.copy.wg", 256}};
  r.add_variant(std::move(v));
}

}  // namespace hl::gpu
