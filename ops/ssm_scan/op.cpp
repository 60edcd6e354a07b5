// ssm_scan: the gated delta rule, chunked for prompts and recurrent for decode, carrying the state.
// The op's signature, its reference variant and its Vulkan variants (README.md lists them).
#include "ops/ssm_scan/reference.h"
#include "ops/registry.h"

namespace hl::gpu {

OpDef ssm_scan_with_cases(OpDef d);  // cases.cpp: its cases, tolerance and goldens
void register_ssm_scan_vulkan(Registry& r);  // vulkan.cpp
void register_ssm_scan_vulkan_chunked(Registry& r);  // vulkan_chunked.cpp
void register_ssm_scan_vulkan_two_pass(Registry& r);  // vulkan_two_pass.cpp

using M = Mat<float>;

void register_ssm_scan(Registry& r) {
  r.add_op(ssm_scan_with_cases({"ssm_scan",
            "gated delta rule: q, k [T, n_k*d_k], v [T, n_v*d_v], beta, g [T, n_v], state [n_v, d_k*d_v] (carried) -> "
            "o [T, n_v*d_v]",
            {"q", "k", "v", "beta", "g"}, {}, {"state"}, {"o"}, {"n_k_heads", "decode", "chunk", "tiled"}}));
  r.add_variant(reference_variant("ssm_scan", "the oracle (ops/ssm_scan/reference.h), f32 on the host", [](VariantCtx&, OpArgs& a) {
    // Prefill chunks use the chunked form (param chunk; 0: the recurrence), decode steps the recurrence,
    // as the oracle does.
    const M &q = a.in("q").f32(), &k = a.in("k").f32(), &v = a.in("v").f32(), &b = a.in("beta").f32(), &g = a.in("g").f32();
    M& st = a.state("state").f32_mut();
    const int nk = int(a.iparam("n_k_heads")), chunk = a.p.count("chunk") ? int(a.iparam("chunk")) : 64;
    const auto order = a.p.count("tiled") && a.param("tiled") != 0 ? ref::HeadOrder::Tiled : ref::HeadOrder::Grouped;
    a.set("o", Tensor::from(a.param("decode") != 0 || chunk == 0 ? ref::ssm_scan_recurrent(q, k, v, b, g, st, nk, order)
                                                                 : ref::ssm_scan_chunked(q, k, v, b, g, st, nk, chunk, order)));
  }));
  register_ssm_scan_vulkan(r);
  register_ssm_scan_vulkan_chunked(r);
  register_ssm_scan_vulkan_two_pass(r);
}

}  // namespace hl::gpu
