// Small helpers shared by the Vulkan variants (gpu/ops/vk_*.cpp).
#pragma once
#include <algorithm>

#include "gpu/ops/registry.h"

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

inline uint32_t u32(int64_t v) {
  if (v < 0 || v > int64_t(UINT32_MAX)) fail("value {} does not fit a 32-bit kernel argument", v);
  return uint32_t(v);
}

// A Vulkan variant of `op`; needs a device. `unavailable` may add device requirements.
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
  // Every kernel reduces with subgroup arithmetic (gpu/shaders/common.glsl).
  v.unavailable = [extra = std::move(unavailable)](const Device& d) -> std::string {
    const auto& i = d.info();
    if (!(i.subgroup_stages & VK_SHADER_STAGE_COMPUTE_BIT) || !i.has_subgroup_operation(VK_SUBGROUP_FEATURE_ARITHMETIC_BIT))
      return "the device has no subgroup arithmetic in compute shaders";
    return extra ? extra(d) : "";
  };
  v.run = std::move(run);
  return v;
}

// Why kernels on cooperative matrices (gpu/shaders/coopmat.glsl, *_cm.comp) cannot run on d ("" = they can):
// VK_KHR_cooperative_matrix with a 16x16x16 f16 x f16 + f32 subgroup shape, shaderFloat16, the Vulkan memory
// model, full subgroups. emulated: their *_cm_emul.comp builds (HL_CM_EMULATE), which need shaderFloat16 and
// subgroups of at least 8 only (gpu/ops/vk_route_pack.cpp).
std::string coopmat_unavailable(const Device& d, bool emulated);

// ssm_scan's dimensions, checked against every input (gpu/ops/vk_deltanet.cpp; every Vulkan ssm_scan variant).
struct ScanShape {
  int64_t T, nk, nv, dk, dv;
};
ScanShape ssm_scan_shape(OpArgs& a);

// attention: checks the shapes and appends k, v at rows [kv_len, kv_len + T) of the caches
// (attention_append.comp; gpu/ops/vk_attention.cpp; every Vulkan attention variant).
struct AttnShape {
  int64_t T, n_q, n_kv, D, kv_len;
};
AttnShape attention_append_kv(Device& d, OpArgs& a);
// attention: combines `splits` partial results per query row ([acc (D), max, sum] rows of `part`) into o, times
// sigmoid(gate) (attention_merge.comp; every Vulkan attention variant that splits key ranges).
void attention_merge(Device& d, OpArgs& a, const Tensor& part, Tensor& o, const AttnShape& s, uint32_t splits, uint32_t wg);
// attention, prompt chunks on query tiles (attention_tiled.comp's bindings, push constants and work split;
// vulkan:tiled, vulkan:flash_coopmat): `shader` over n_kv x ceil(T G / rows) row tiles x key splits, the
// splits merged by attention_merge; returns o. Splits as lavapipe's loop limit (budget_keys, 0: none) and
// tune("max_keys") require, and more while fewer than tune("min_groups") workgroups would run, down to
// tune("split_min_keys") keys each; whole `keys` blocks per split; merge workgroups of tune("merge_wg").
struct TiledAttn {
  std::string shader;
  std::vector<vk::SpecConstant> spec;
  uint32_t rows, keys;    // query rows per workgroup; keys per step
  uint64_t budget_keys;   // keys one workgroup may walk, 0: any
  bool full_subgroups;
  std::function<uint32_t(const char*)> tune;
  const Tensor* keys_buf = nullptr;    // bound instead of k_cache / v_cache where set (e.g. f16 copies)
  const Tensor* values_buf = nullptr;
};
Tensor attention_tiled_run(Device& d, OpArgs& a, const AttnShape& s, const TiledAttn& k);

// Quantized weights read as ggml blocks (gpu/ops/vk_quant.cpp): whether the shaders decode this weight's
// storage type, and its raw rows on the device.
bool vk_quant_decodes(const WeightRef& w);
Tensor vk_quant_rows(VariantCtx& c, const WeightRef& w, const std::string& what);

// Registration of each Vulkan op file (called from gpu/ops/all_ops.cpp).
void register_vk_elementwise(Registry& r);  // add
void register_vk_norms(Registry& r);        // rmsnorm
void register_vk_matmul(Registry& r);       // matmul, lm_head
void register_vk_attention(Registry& r);    // slice, rope, attention
void register_vk_deltanet(Registry& r);     // ssm_conv, l2norm, ssm_gates, ssm_scan, gated_rmsnorm
void register_vk_moe(Registry& r);          // embed, moe_router, moe_experts, shared_expert
void register_vk_quant(Registry& r);        // matmul, lm_head, moe_experts on quantized (GGUF) weights
void register_vk_gdn_prep(Registry& r);     // gdn_prep: fused conv, norms, gates; and the unfused sequence
void register_vk_ssm_chunked(Registry& r);  // ssm_scan, chunk-parallel
void register_vk_route_pack(Registry& r);   // moe_experts, route-packed grouped GEMM (prefill)
void register_vk_attention_tiled(Registry& r);  // attention, query-tiled prefill
void register_vk_attention_coopmat(Registry& r);  // attention, query-tiled prefill on cooperative matrices
void register_halide_variants(Registry& r);     // halide:*, halide-vulkan:* (gpu/halide/; empty without HYBRIDLAB_HALIDE)

}  // namespace hl::gpu
