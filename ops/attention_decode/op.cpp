// attention_decode: a full-attention layer from its projections to the attention output, for one decode token: the
// query and gate halves sliced from the q projection, q and k rmsnorm'd per head and rotated (NeoX), k and v appended
// to the cache, the gated attention. A composite op (parts: slice, rmsnorm, rope, attention): with its reference variant
// the forward pass runs the parts, each as the plan picks it (its reference: attention_prep's parts, then attention's); its Vulkan variant runs the step in one or two dispatches
// (README.md).
#include "ops/attention_prep/parts.h"

namespace hl::gpu {

OpDef attention_decode_with_cases(OpDef d);  // cases.cpp: its cases and tolerance
void register_attention_decode_vulkan(Registry& r);  // vulkan.cpp

void register_attention_decode(Registry& r) {
  r.add_op(attention_decode_with_cases(
      {"attention_decode",
       "qg [T, n_q*2D] (per head D query then D gate columns), k, v [T, n_kv*D], q_norm, k_norm [D] -> q = rope(rmsnorm(q)), "
       "k = rope(rmsnorm(k)) at pos0; k, v appended at cache rows [kv_len, kv_len+T); o = attention(q, k, v) * sigmoid(gate) "
       "[T, n_q*D]",
       {"qg", "k", "v"}, {"q_norm", "k_norm"}, {"k_cache", "v_cache"}, {"o"},
       {"n_q_heads", "n_kv_heads", "kv_len", "rot_dims", "theta", "pos0", "eps"},
       /*live=*/true, /*parts=*/{"slice", "rmsnorm", "rope", "attention"}}));
  // The parts' reference variants composed, as the unfused forward pass runs them (Forward::attention_block).
  r.add_variant(reference_variant("attention_decode", "the oracle: slice's, rmsnorm's, rope's and attention's reference variants composed, f32 on the host",
                                  [](VariantCtx& c, OpArgs& a) {
    const Registry& reg = Registry::get();
    OpArgs prep{{{"qg", a.in("qg")}, {"k", a.in("k")}}, {{"q_norm", a.weight("q_norm")}, {"k_norm", a.weight("k_norm")}}, a.p};
    attention_prep_parts(c, prep, "reference", "reference", "reference");
    OpArgs at{{{"q", prep.t.at("q")}, {"k", prep.t.at("k")}, {"v", a.in("v")}, {"gate", prep.t.at("gate")},
               {"k_cache", a.state("k_cache")}, {"v_cache", a.state("v_cache")}},
              {},
              {{"n_q_heads", a.param("n_q_heads")}, {"n_kv_heads", a.param("n_kv_heads")}, {"kv_len", a.param("kv_len")}}};
    reg.variant("attention", "reference").run(c, at);
    a.state("k_cache") = at.t.at("k_cache");
    a.state("v_cache") = at.t.at("v_cache");
    a.set("o", at.t.at("o"));
  }));
  register_attention_decode_vulkan(r);
}

}  // namespace hl::gpu
