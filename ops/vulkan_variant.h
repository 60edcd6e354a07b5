// Small helpers shared by the Vulkan variants of every op (ops/<op>/vulkan*.cpp).
#pragma once
#include <algorithm>
#include <bit>

#include "ops/registry.h"

namespace hl::gpu {

// A 2-D grid of at least n workgroups (x is capped at 65535, the guaranteed minimum of
// maxComputeWorkGroupCount); shaders recover the index with hl_group_index() and skip the excess.
struct Grid {
  uint32_t x, y;
};
inline Grid grid(uint64_t n) {
  const uint32_t x = uint32_t(std::clamp<uint64_t>(n, 1, 65535));
  return {x, uint32_t((n + x - 1) / x)};
}

// One invocation per element of a flat range of n: the dispatch grid for workgroups of wg.
inline Grid elements(uint64_t n, uint32_t wg) { return grid((n + wg - 1) / wg); }

// The f32 output `name` [rows, cols] on the device: the tensor the caller preset in `a` where it has that shape (a replayed
// decode step's live op writes straight into the tensor the step's later segments read: plan/replay.h), else a new one.
inline Tensor output_tensor(Device& d, OpArgs& a, const std::string& name, int64_t rows, int64_t cols) {
  const auto it = a.t.find(name);
  if (it != a.t.end() && it->second.valid() && it->second.type() == Tensor::Type::F32 && it->second.rows() == rows &&
      it->second.cols() == cols)
    return it->second;
  return Tensor::device(d, rows, cols);
}

inline uint32_t u32(int64_t v) {
  if (v < 0 || v > int64_t(UINT32_MAX)) fail("value {} does not fit a 32-bit kernel argument", v);
  return uint32_t(v);
}

// A Vulkan variant of `op`; needs a device. `unavailable` may add device requirements. Set status (for
// non-defaults) and tunables on the result before registering it.
inline Variant vulkan_variant(std::string op, std::string name, std::string summary,
                              std::function<void(VariantCtx&, OpArgs&)> run, bool family_default = false,
                              bool per_token = false, std::function<std::string(const Device&)> unavailable = {}) {
  Variant v;
  v.op = std::move(op);
  v.name = std::move(name);
  v.summary = std::move(summary);
  v.family_default = family_default;
  v.per_token = per_token;
  v.needs_device = true;
  // Every kernel reduces with subgroup arithmetic (ops/shaders/common.glsl).
  v.unavailable = [extra = std::move(unavailable)](const Device& d) -> std::string {
    const auto& i = d.info();
    if (!(i.subgroup_stages & VK_SHADER_STAGE_COMPUTE_BIT) || !i.has_subgroup_operation(VK_SUBGROUP_FEATURE_ARITHMETIC_BIT))
      return "the device has no subgroup arithmetic in compute shaders";
    return extra ? extra(d) : "";
  };
  v.run = std::move(run);
  return v;
}

// Why kernels on cooperative matrices (ops/shaders/coopmat.glsl, *_cm.comp) cannot run on d ("" = they can):
// VK_KHR_cooperative_matrix with a 16x16x16 f16 x f16 + f32 subgroup shape, shaderFloat16, the Vulkan memory
// model, full subgroups. emulated: their *_cm_emul.comp builds (HL_CM_EMULATE), which need shaderFloat16 and
// subgroups of at least 8 only.
std::string coopmat_unavailable(const Device& d, bool emulated);

// A tensor bound whole as one storage buffer must fit maxStorageBufferRange (lavapipe: 128 MiB).
void check_binding(const Device& d, const Tensor& t, const std::string& op, const std::string& what);

// Per-group norms (rmsnorm, l2norm, gated_rmsnorm): `group` invocations (a power of two; 0: D / 8 rounded up to one,
// 8 values per invocation) per group of D columns of a row, wg / group groups per workgroup; tunables
// <shader>.rowgroup.{wg,group}; push constants {groups, D, ...}.
template <class Push>
void rowgroup_dispatch(Device& d, const std::string& shader, const std::vector<BufferPtr>& buffers, const Push& pc) {
  const uint32_t wg = d.tune(shader + ".rowgroup.wg"), tuned = d.tune(shader + ".rowgroup.group");
  const uint32_t group = tuned ? tuned : std::bit_ceil(std::max<uint32_t>(pc.D / 8, 1));
  if (!std::has_single_bit(wg) || !std::has_single_bit(group))
    fail("{}: {}.rowgroup.wg = {} and .group = {} must be powers of two", shader, shader, wg, tuned);
  const uint32_t gi = std::min({group, wg, std::bit_ceil(pc.D)});
  const auto& p = d.pipeline(shader, {{0, wg}, {1, gi}, {2, pc.D}}, u32(int64_t(buffers.size())), sizeof pc);
  const Grid g = grid((uint64_t(pc.groups) + wg / gi - 1) / (wg / gi));
  d.dispatch(p, buffers, pc, g.x, g.y);
}

}  // namespace hl::gpu
