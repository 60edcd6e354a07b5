// attention_prep: a full-attention layer's inputs to `attention` for a prompt chunk, from its projections: the query and
// gate halves of each head sliced from the q projection, q and k rmsnorm'd per head and rotated (NeoX) at positions
// pos0 + t. A composite op (parts: slice, rmsnorm, rope): with its reference variant the forward pass runs the parts,
// each as the plan picks it; its Vulkan variant vulkan:fused runs them in one dispatch (README.md). Decode has attention_decode,
// which takes these steps and the attention itself.
#include "ops/attention_prep/parts.h"

namespace hl::gpu {

OpDef attention_prep_with_cases(OpDef d);  // cases.cpp: its cases and tolerance
void register_attention_prep_vulkan(Registry& r);  // vulkan.cpp

void attention_prep_parts(VariantCtx& c, OpArgs& a, const char* slice, const char* rmsnorm, const char* rope) {
  const Registry& reg = Registry::get();
  const int64_t nq = a.iparam("n_q_heads");
  if (nq <= 0 || a.in("qg").cols() % (2 * nq)) fail("attention_prep: qg's {} columns are not 2 x {} heads", a.in("qg").cols(), nq);
  const int64_t D = a.in("qg").cols() / (2 * nq);
  auto part = [&](const char* op, const char* variant, OpArgs args) {
    reg.variant(op, variant).run(c, args);
    return args.t.at("y");
  };
  auto half = [&](int64_t offset) {
    return part("slice", slice, {{{"x", a.in("qg")}}, {}, {{"period", double(2 * D)}, {"offset", double(offset)}, {"width", double(D)}}});
  };
  auto norm_rope = [&](const Tensor& x, const char* gain) {
    const Tensor n = part("rmsnorm", rmsnorm, {{{"x", x}}, {{"gain", a.weight(gain)}}, {{"eps", a.param("eps")}}});
    return part("rope", rope, {{{"x", n}}, {}, {{"head_dim", double(D)}, {"rot_dims", a.param("rot_dims")}, {"theta", a.param("theta")},
                                                {"pos0", a.param("pos0")}}});
  };
  a.set("q", norm_rope(half(0), "q_norm"));
  a.set("gate", half(D));
  a.set("k", norm_rope(a.in("k"), "k_norm"));
}

void register_attention_prep(Registry& r) {
  r.add_op(attention_prep_with_cases(
      {"attention_prep",
       "qg [T, n_q*2D] (per head D query then D gate columns), k [T, n_kv*D], q_norm, k_norm [D] -> q = rope(rmsnorm(q)) "
       "[T, n_q*D], gate [T, n_q*D], k = rope(rmsnorm(k)) [T, n_kv*D] at positions pos0 + t",
       {"qg", "k"}, {"q_norm", "k_norm"}, {}, {"q", "gate", "k"},
       {"n_q_heads", "rot_dims", "theta", "pos0", "eps"},
       /*live=*/true, /*parts=*/{"slice", "rmsnorm", "rope"}}));
  // The parts' reference variants composed, as the unfused forward pass runs them (Forward::attention_block).
  r.add_variant(reference_variant("attention_prep", "the oracle: slice's, rmsnorm's and rope's reference variants composed, f32 on the host",
                                  [](VariantCtx& c, OpArgs& a) { attention_prep_parts(c, a, "reference", "reference", "reference"); }));
  register_attention_prep_vulkan(r);
}

}  // namespace hl::gpu
