// Row-wise argmax (plan/argmax.h): a device helper beside the ops, not an op of the forward pass.
#include "plan/argmax.h"

#include <algorithm>
#include <cmath>

#include "ops/vulkan_variant.h"

namespace hl::gpu {

Tensor argmax_device(Device& d, const Tensor& x) {
  if (x.type() != Tensor::Type::F32 || x.cols() < 1) fail("argmax: needs f32 rows of at least one column");
  Tensor out = Tensor::device(d, x.rows(), 1, Tensor::Type::I32);
  const uint32_t wg = d.tune("argmax.rowgroup.wg");  // the profile's wg_size unless a table names it
  // Columns per workgroup of the first step: a vocabulary-wide row (248320) in about 60 slices.
  const uint32_t span = std::max<uint32_t>(d.profile().get("argmax.span", 4096), 1);
  const uint32_t cols = u32(x.cols()), parts = (cols + span - 1) / span;
  const struct {
    uint32_t rows, cols, parts, span;
  } push{u32(x.rows()), cols, parts, span};
  Tensor part = Tensor::device(d, x.rows(), int64_t(parts) * 2);  // (value, column) pairs
  const Grid g0 = grid(uint64_t(x.rows()) * parts), g1 = grid(uint64_t(x.rows()));
  d.dispatch(d.pipeline("argmax", {{0, wg}, {1, 0}}, 3, sizeof push), {x.buffer(d), part.buffer_mut(d), out.buffer_mut(d)},
             push, g0.x, g0.y);
  d.dispatch(d.pipeline("argmax", {{0, wg}, {1, 1}}, 3, sizeof push), {x.buffer(d), part.buffer_mut(d), out.buffer_mut(d)},
             push, g1.x, g1.y);
  return out;
}

std::vector<int32_t> argmax_host(const Mat<float>& x) {
  std::vector<int32_t> ids(size_t(x.rows()), -1);
  for (int64_t r = 0; r < x.rows(); ++r) {
    float best = 0;
    for (int64_t c = 0; c < x.cols(); ++c) {
      const float v = x(r, c);
      if (!std::isnan(v) && (ids[size_t(r)] < 0 || v > best)) best = v, ids[size_t(r)] = int32_t(c);
    }
  }
  return ids;
}

std::vector<int32_t> argmax_rows(Device* d, const Tensor& x) {
  if (!d || !x.device_current() || x.host_current()) return argmax_host(x.f32());
  const Tensor ids = argmax_device(*d, x);
  const IMat& m = ids.i32();  // downloads rows * 4 bytes
  return {m.data(), m.data() + m.size()};
}

}  // namespace hl::gpu
