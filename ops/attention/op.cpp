// attention: causal GQA softmax attention over the KV cache, gated by sigmoid(gate).
// The op's signature, its reference variant and its Vulkan variants (README.md lists them).
#include "ops/attention/reference.h"
#include "ops/registry.h"

namespace hl::gpu {

OpDef attention_with_cases(OpDef d);  // cases.cpp: its cases, tolerance and goldens
void register_attention_vulkan(Registry& r);  // vulkan.cpp
void register_attention_vulkan_tiled(Registry& r);  // vulkan_tiled.cpp
void register_attention_vulkan_flash_coopmat(Registry& r);  // vulkan_flash_coopmat.cpp
void register_attention_vulkan_flash_rows(Registry& r);  // vulkan_flash_rows.cpp

using M = Mat<float>;

void register_attention(Registry& r) {
  r.add_op(attention_with_cases({"attention",
            "causal GQA softmax over the KV cache (k, v appended at rows [kv_len, kv_len+T)), times sigmoid(gate): "
            "o [T, n_q*D]",
            {"q", "k", "v", "gate"}, {}, {"k_cache", "v_cache"}, {"o"}, {"n_q_heads", "n_kv_heads", "kv_len"}, /*live=*/true, {},
            /*tunables=*/{{"attention.append.wg", 256}}}));
  r.add_variant(reference_variant("attention", "the oracle (ops/attention/reference.h), f32 on the host", [](VariantCtx&, OpArgs& a) {
    // The cache tensors have a capacity; the oracle's cache holds exactly the kv_len valid rows.
    const int64_t len = a.iparam("kv_len"), T = a.in("q").rows();
    Tensor& kc = a.state("k_cache");
    Tensor& vc = a.state("v_cache");
    if (kc.rows() < len + T) fail("attention: KV cache holds {} rows, {} needed", kc.rows(), len + T);
    ref::KvCache<float> cache{kc.f32().topRows(len), vc.f32().topRows(len)};
    const M o = ref::attention(a.in("q").f32(), a.in("k").f32(), a.in("v").f32(), a.in("gate").f32(), cache,
                               int(a.iparam("n_q_heads")), int(a.iparam("n_kv_heads")));
    kc.f32_mut().middleRows(len, T) = cache.k.bottomRows(T);
    vc.f32_mut().middleRows(len, T) = cache.v.bottomRows(T);
    a.set("o", Tensor::from(o));
  }));
  register_attention_vulkan(r);
  register_attention_vulkan_tiled(r);
  register_attention_vulkan_flash_coopmat(r);
  register_attention_vulkan_flash_rows(r);
}

}  // namespace hl::gpu
