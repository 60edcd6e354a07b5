// attention_decode: a full-attention layer from its projections to the attention output, for one decode token: the
// query and gate halves sliced from the q projection, q and k rmsnorm'd per head and rotated (NeoX), k and v appended
// to the cache, the gated attention. A composite op (parts: slice, rmsnorm, rope, attention): with its reference variant
// the forward pass runs the parts, each as the plan picks it; its Vulkan variant runs the step in one or two dispatches
// (README.md).
#include "ops/registry.h"

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
    const int64_t nq = a.iparam("n_q_heads");
    if (nq <= 0 || a.in("qg").cols() % (2 * nq)) fail("attention_decode: qg's {} columns are not 2 x {} heads", a.in("qg").cols(), nq);
    const int64_t D = a.in("qg").cols() / (2 * nq);
    auto part = [&](const char* op, OpArgs args) {
      reg.variant(op, "reference").run(c, args);
      return args;
    };
    auto half = [&](int64_t offset) {
      return part("slice", {{{"x", a.in("qg")}}, {}, {{"period", double(2 * D)}, {"offset", double(offset)}, {"width", double(D)}}}).t.at("y");
    };
    auto norm_rope = [&](const Tensor& x, const char* gain) {
      const Tensor n = part("rmsnorm", {{{"x", x}}, {{"gain", a.weight(gain)}}, {{"eps", a.param("eps")}}}).t.at("y");
      return part("rope", {{{"x", n}}, {}, {{"head_dim", double(D)}, {"rot_dims", a.param("rot_dims")}, {"theta", a.param("theta")},
                                            {"pos0", a.param("pos0")}}}).t.at("y");
    };
    OpArgs at{{{"q", norm_rope(half(0), "q_norm")}, {"k", norm_rope(a.in("k"), "k_norm")}, {"v", a.in("v")}, {"gate", half(D)},
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
