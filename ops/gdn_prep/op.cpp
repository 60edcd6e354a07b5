// gdn_prep: the Gated DeltaNet's input stage fused: conv, the q/k/v split, the q/k l2 norms and the gates.
// The op's signature, its reference variant and its Vulkan variants (README.md lists them).
#include "ops/ssm_conv/reference.h"
#include "ops/slice/reference.h"
#include "ops/l2norm/reference.h"
#include "ops/ssm_gates/reference.h"
#include "ops/registry.h"

namespace hl::gpu {

OpDef gdn_prep_with_cases(OpDef d);  // cases.cpp: its cases, tolerance and goldens
void register_gdn_prep_vulkan(Registry& r);  // vulkan.cpp

using M = Mat<float>;

void register_gdn_prep(Registry& r) {
  r.add_op(gdn_prep_with_cases({"gdn_prep",
            "x [T, C] = q | k | v (n_k heads of head_dim, then n_v value heads), b, a [T, n_v], conv w [C, K], state "
            "[K-1, C] (carried) -> u = silu(conv); q = l2norm(u_q) * scale, k = l2norm(u_k), v = u_v; beta, g as ssm_gates",
            {"x", "b", "a"}, {"w", "A", "dt_bias"}, {"state"}, {"q", "k", "v", "beta", "g"},
            {"n_k_heads", "head_dim", "scale", "eps"}, /*live=*/false, /*parts=*/{"ssm_conv", "slice", "l2norm", "ssm_gates"}}));
  r.add_variant(reference_variant("gdn_prep", "the oracle (ops/{ssm_conv,slice,l2norm,ssm_gates}/reference.h), f32 on the host", [](VariantCtx& c, OpArgs& a) {  // the separate ops composed, as the unfused forward runs them
    const int64_t nk = a.iparam("n_k_heads"), dk = a.iparam("head_dim"), kd = nk * dk, C = a.in("x").cols();
    if (nk <= 0 || dk <= 0 || 2 * kd >= C) fail("gdn_prep: {} key heads of {} leave no value channels of {}", nk, dk, C);
    const M u = ref::ssm_conv(a.in("x").f32(), c.weights->host(a.weight("w")).f32(), a.state("state").f32_mut());
    const double eps = a.param("eps");
    a.set("q", Tensor::from(ref::l2norm(ref::slice(u, C, 0, kd), int(dk), float(a.param("scale")), eps)));
    a.set("k", Tensor::from(ref::l2norm(ref::slice(u, C, kd, kd), int(dk), 1.0f, eps)));
    a.set("v", Tensor::from(ref::slice(u, C, 2 * kd, C - 2 * kd)));
    auto g = ref::ssm_gates(a.in("b").f32(), a.in("a").f32(), c.weights->host_vec(a.weight("A")),
                            c.weights->host_vec(a.weight("dt_bias")));
    a.set("beta", Tensor::from(std::move(g.beta)));
    a.set("g", Tensor::from(std::move(g.g)));
  }));
  register_gdn_prep_vulkan(r);
}

}  // namespace hl::gpu
