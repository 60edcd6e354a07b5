// What every Vulkan attention variant shares (ops/attention/vulkan*.cpp).
#pragma once
#include "ops/vulkan_variant.h"

namespace hl::gpu {

// attention_shape checks the shapes; attention_append_kv checks them and appends k, v at rows [kv_len, kv_len + T) of
// the caches (attention_append.comp).
struct AttnShape {
  int64_t T, n_q, n_kv, D, kv_len;
};
AttnShape attention_shape(OpArgs& a);
AttnShape attention_append_kv(Device& d, OpArgs& a);
// Combines `splits` partial results per query row ([acc (D), max, sum] rows of `part`) into o, times
// sigmoid(gate) (attention_merge.comp). split_keys > 0: split s holds keys from s * split_keys on, and the splits past a
// row's last key are not read (a kernel need not write them); 0: every split is read.
void attention_merge(Device& d, const Tensor& gate, const Tensor& part, Tensor& o, const AttnShape& s, uint32_t splits,
                     uint32_t wg, uint32_t split_keys = 0);
// Prompt chunks on query tiles (attention_tiled.comp's bindings, push constants and work split; vulkan:tiled,
// vulkan:flash_coopmat): `shader` over n_kv x ceil(T G / rows) row tiles x key splits, the splits merged by
// attention_merge; returns o. Splits as lavapipe's loop limit (budget_keys, 0: none) and tune("max_keys")
// require, and more while fewer than tune("min_groups") workgroups would run, down to tune("split_min_keys")
// keys each; whole `keys` blocks per split; merge workgroups of tune("merge_wg").
struct TiledAttn {
  std::string shader;
  std::vector<vk::SpecConstant> spec;
  uint32_t rows, keys;    // query rows per workgroup; keys per step
  uint64_t budget_keys;   // keys one workgroup may walk, 0: any
  bool full_subgroups;
  std::function<uint32_t(const char*)> tune;
  const Tensor* keys_buf = nullptr;    // bound instead of k_cache / v_cache where set (e.g. f16 copies)
  const Tensor* values_buf = nullptr;
  // The kernel appends k, v itself (the caches bound writable, k and v as bindings 5 and 6; its keys from kv_len on
  // read from k, v): no attention_append_kv before it.
  bool appends = false;
};
Tensor attention_tiled_run(Device& d, OpArgs& a, const AttnShape& s, const TiledAttn& k);

}  // namespace hl::gpu
