// rope on Vulkan: vulkan:neox, one invocation per rotated pair or copied dim, angles reduced in 64-bit fixed
// point (rope.comp).
#include <bit>
#include <cmath>
#include <numbers>

#include "ops/rope/freq_table.h"

namespace hl::gpu {

// Declared in freq_table.h.
Tensor rope_freq_table(VariantCtx& c, double theta, int64_t R) {
  const int64_t half = R / 2;
  return c.weights->constant(fmt::format("rope.freq {:a} {}", theta, R), [&] {
    IMat freq = IMat::Zero(1, std::max<int64_t>(2 * half, 2));
    for (int64_t i = 0; i < half; ++i) {
      const double inv_freq = std::pow(theta, -2.0 * double(i) / double(R));
      const auto f = uint64_t(std::ldexp(inv_freq / (2 * std::numbers::pi), 64));  // < 2^62: inv_freq <= 1
      freq(0, 2 * i) = std::bit_cast<int32_t>(uint32_t(f));
      freq(0, 2 * i + 1) = std::bit_cast<int32_t>(uint32_t(f >> 32));
    }
    return Tensor::from_i32(std::move(freq));
  });
}

namespace {

void rope(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const Tensor& x = a.in("x");
  const int64_t D = a.iparam("head_dim"), R = a.iparam("rot_dims"), pos0 = a.iparam("pos0");
  if (D <= 0 || x.cols() % D || R < 0 || R % 2 || R > D)
    fail("rope: {} columns, head dim {}, rotary dims {} are inconsistent", x.cols(), D, R);
  const int64_t half = R / 2;
  const Tensor table = rope_freq_table(c, a.param("theta"), R);
  Tensor y = Tensor::device(d, x.rows(), x.cols());
  struct {
    uint32_t n, heads, D, half, pos0;
  } pc{u32(x.rows() * (x.cols() / D) * (D - half)), u32(x.cols() / D), u32(D), u32(half), u32(pos0)};
  u32(pos0 + x.rows());  // the last position fits 32 bits too
  if (pc.n > 0) {
    const uint32_t wg = d.tune("rope.neox.wg");
    const Grid g = elements(pc.n, wg);
    d.dispatch(d.pipeline("rope", {{0, wg}}, 3, sizeof pc), {x.buffer(d), table.buffer(d), y.buffer_mut(d)}, pc, g.x,
               g.y);
  }
  a.set("y", y);
}

}  // namespace

void register_rope_vulkan(Registry& r) {
  Variant v = vulkan_variant("rope", "vulkan:neox",
                             "one invocation per rotated pair or copied dim; angles reduced in 64-bit fixed point", rope, true);
  v.tunables = {{"rope.neox.wg", 256}};
  r.add_variant(std::move(v));
}

}  // namespace hl::gpu
