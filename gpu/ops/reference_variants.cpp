// The "reference" variant of every op: the oracle's f32 function (reference/ops/) on host tensors.
// Validate mode runs these beside every other variant on identical inputs.
#include "gpu/ops/registry.h"
#include "ops/attention.h"
#include "ops/embed.h"
#include "ops/gated_rmsnorm.h"
#include "ops/l2norm.h"
#include "ops/matmul.h"
#include "ops/moe_experts.h"
#include "ops/rmsnorm.h"
#include "ops/rope.h"
#include "ops/shared_expert.h"
#include "ops/slice.h"
#include "ops/ssm_conv.h"
#include "ops/ssm_gates.h"
#include "ops/ssm_scan.h"

namespace hl::gpu {

namespace {

using M = Mat<float>;

ref::ExpertMats<float> expert_mats(WeightStore& ws, const WeightRef& g, const WeightRef& u, const WeightRef& d) {
  return {ws.host(g).f32(), ws.host(u).f32(), ws.host(d).f32()};
}

void add(Registry& r, const std::string& op, std::function<void(VariantCtx&, OpArgs&)> fn, std::string file = "") {
  Variant v;
  v.op = op;
  v.name = "reference";
  v.summary = "the oracle (" + (file.empty() ? "reference/ops/" + op + ".h" : file) + "), f32 on the host";
  v.family_default = true;
  v.run = std::move(fn);
  r.add_variant(std::move(v));
}

}  // namespace

void register_reference_variants(Registry& r) {
  add(r, "embed", [](VariantCtx&, OpArgs& a) {
    const IMat& t = a.in("tokens").i32();
    a.set("y", Tensor::from(ref::embed<float>(a.weight("table"), std::vector<int32_t>(t.data(), t.data() + t.size()))));
  });
  add(r, "rmsnorm", [](VariantCtx& c, OpArgs& a) {
    a.set("y", Tensor::from(ref::rmsnorm(a.in("x").f32(), c.weights->host_vec(a.weight("gain")), a.param("eps"))));
  });
  add(r, "add_rmsnorm", [](VariantCtx& c, OpArgs& a) {
    // With b: a + b first, then x + that (the order of the unfused ops: add(a, b), then the residual add).
    M y = a.t.count("b") ? M(a.in("x").f32() + M(a.in("a").f32() + a.in("b").f32())) : M(a.in("x").f32() + a.in("a").f32());
    a.set("n", Tensor::from(ref::rmsnorm(y, c.weights->host_vec(a.weight("gain")), a.param("eps"))));
    a.set("y", Tensor::from(std::move(y)));
  }, "Eigen x + a (or x + (a + b)), then reference/ops/rmsnorm.h");
  for (const char* op : {"matmul", "lm_head"})
    add(r, op, [](VariantCtx& c, OpArgs& a) {
      a.set("y", Tensor::from(ref::matmul(a.in("x").f32(), c.weights->host(a.weight("w")).f32())));
    }, "reference/ops/matmul.h");
  add(r, "add", [](VariantCtx&, OpArgs& a) { a.set("y", Tensor::from(M(a.in("a").f32() + a.in("b").f32()))); }, "Eigen a + b");
  add(r, "slice", [](VariantCtx&, OpArgs& a) {
    a.set("y", Tensor::from(ref::slice(a.in("x").f32(), a.iparam("period"), a.iparam("offset"), a.iparam("width"))));
  });
  add(r, "rope", [](VariantCtx&, OpArgs& a) {
    a.set("y", Tensor::from(ref::rope(a.in("x").f32(), int(a.iparam("head_dim")), int(a.iparam("rot_dims")), a.param("theta"),
                                      a.iparam("pos0"))));
  });
  add(r, "attention", [](VariantCtx&, OpArgs& a) {
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
  });
  add(r, "ssm_conv", [](VariantCtx& c, OpArgs& a) {
    a.set("y", Tensor::from(ref::ssm_conv(a.in("x").f32(), c.weights->host(a.weight("w")).f32(), a.state("state").f32_mut())));
  });
  add(r, "l2norm", [](VariantCtx&, OpArgs& a) {
    a.set("y", Tensor::from(ref::l2norm(a.in("x").f32(), int(a.iparam("head_dim")), float(a.param("scale")), a.param("eps"))));
  });
  add(r, "ssm_gates", [](VariantCtx& c, OpArgs& a) {
    auto g = ref::ssm_gates(a.in("b").f32(), a.in("a").f32(), c.weights->host_vec(a.weight("A")),
                            c.weights->host_vec(a.weight("dt_bias")));
    a.set("beta", Tensor::from(std::move(g.beta)));
    a.set("g", Tensor::from(std::move(g.g)));
  });
  add(r, "gdn_prep", [](VariantCtx& c, OpArgs& a) {  // the separate ops composed, as the unfused forward runs them
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
  }, "reference/ops/ssm_conv.h, slice.h, l2norm.h, ssm_gates.h");
  add(r, "ssm_scan", [](VariantCtx&, OpArgs& a) {
    // Prefill chunks use the chunked form (param chunk; 0: the recurrence), decode steps the recurrence,
    // as the oracle does.
    const M &q = a.in("q").f32(), &k = a.in("k").f32(), &v = a.in("v").f32(), &b = a.in("beta").f32(), &g = a.in("g").f32();
    M& st = a.state("state").f32_mut();
    const int nk = int(a.iparam("n_k_heads")), chunk = a.p.count("chunk") ? int(a.iparam("chunk")) : 64;
    const auto order = a.p.count("tiled") && a.param("tiled") != 0 ? ref::HeadOrder::Tiled : ref::HeadOrder::Grouped;
    a.set("o", Tensor::from(a.param("decode") != 0 || chunk == 0 ? ref::ssm_scan_recurrent(q, k, v, b, g, st, nk, order)
                                                                 : ref::ssm_scan_chunked(q, k, v, b, g, st, nk, chunk, order)));
  });
  add(r, "gated_rmsnorm", [](VariantCtx& c, OpArgs& a) {
    a.set("y", Tensor::from(ref::gated_rmsnorm(a.in("o").f32(), a.in("z").f32(), c.weights->host_vec(a.weight("gain")),
                                               a.param("eps"))));
  });
  add(r, "moe_router", [](VariantCtx&, OpArgs& a) {
    auto routes = ref::moe_router(a.in("logits").f32(), int(a.iparam("k")));
    a.set("expert", Tensor::from_i32(std::move(routes.expert)));
    a.set("weight", Tensor::from(std::move(routes.weight)));
  });
  add(r, "moe_experts", [](VariantCtx& c, OpArgs& a) {  // the oracle, materialising only routed experts
    // Only the experts some token routes to are materialised, one row block each.
    const int E = int(a.iparam("n_experts"));
    const ref::Routes<float> routes{a.in("expert").i32(), a.in("weight").f32()};
    const WeightRef &g = a.weight("gate"), &u = a.weight("up"), &d = a.weight("down");
    const int64_t F = g.rows / E, H = d.rows / E;
    std::vector<std::unique_ptr<ref::ExpertMats<float>>> hold(static_cast<size_t>(E));
    std::vector<const ref::ExpertMats<float>*> ptr(size_t(E), nullptr);
    for (int64_t i = 0; i < routes.expert.size(); ++i) {
      const int e = routes.expert.data()[i];
      if (e < 0 || e >= E) fail("moe_experts: expert id {} outside [0, {})", e, E);
      if (!hold[size_t(e)])
        ptr[size_t(e)] = (hold[size_t(e)] = std::make_unique<ref::ExpertMats<float>>(expert_mats(
                              *c.weights, g.slice_rows(e * F, F), u.slice_rows(e * F, F), d.slice_rows(e * H, H))))
                             .get();
    }
    a.set("y", Tensor::from(ref::moe_experts(a.in("x").f32(), routes, ptr)));
  });
  add(r, "shared_expert", [](VariantCtx& c, OpArgs& a) {
    a.set("y", Tensor::from(ref::shared_expert(a.in("x").f32(),
                                               expert_mats(*c.weights, a.weight("gate"), a.weight("up"), a.weight("down")),
                                               c.weights->host_vec(a.weight("gate_w")))));
  });
}

}  // namespace hl::gpu
