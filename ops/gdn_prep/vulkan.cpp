// Vulkan variants of gdn_prep, the Gated DeltaNet's steps between the input projections and ssm_scan
// (SPEC 4.4 steps 2-6: conv with the carried state, silu, the q | k | v split, L2 norms, q scale, gates):
// vulkan:fused runs them in one dispatch (gdn_prep.comp); vulkan:unfused runs the separate ops' Vulkan
// variants one after another, as the unfused forward pass does, so the two can be timed side by side.
#include <bit>

#include "ops/vulkan_variant.h"

namespace hl::gpu {

namespace {

struct PrepShape {
  int64_t T, C, K, nk, dk, nv, dv;
};

// Checks every input against x [T, C] = q | k | v (nk key heads of dk, nv value heads of dv).
PrepShape prep_shape(OpArgs& a, const Tensor& w, int64_t nv) {
  const Tensor &x = a.in("x"), &b = a.in("b"), &ap = a.in("a");
  const Tensor& state = a.state("state");
  const int64_t T = x.rows(), C = x.cols(), K = w.cols(), nk = a.iparam("n_k_heads"), dk = a.iparam("head_dim");
  const int64_t vd = C - 2 * nk * dk, dv = nv > 0 ? vd / nv : 0;
  const bool ok = T > 0 && nk > 0 && dk > 0 && nv > 0 && vd > 0 && vd % nv == 0 && w.rows() == C && K >= 2 &&
                  state.rows() == K - 1 && state.cols() == C && b.rows() == T && b.cols() == nv && ap.rows() == T &&
                  ap.cols() == nv;
  if (!ok)
    fail("gdn_prep: x [{}, {}], b [{}, {}], a [{}, {}], w [{}, {}], state [{}, {}] do not fit {} key heads of {} and {} "
         "value heads",
         T, C, b.rows(), b.cols(), ap.rows(), ap.cols(), w.rows(), K, state.rows(), state.cols(), nk, dk, nv);
  return {T, C, K, nk, dk, nv, dv};
}

void fused(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const Tensor w = c.weights->device(a.weight("w"));
  const Tensor A = c.weights->device(a.weight("A")), dt = c.weights->device(a.weight("dt_bias"));
  if (dt.numel() != A.numel()) fail("gdn_prep: A [{}] and dt_bias [{}] differ", A.numel(), dt.numel());
  const PrepShape s = prep_shape(a, w, A.numel());
  const Tensor &x = a.in("x"), &b = a.in("b"), &ap = a.in("a");
  Tensor& state = a.state("state");

  // Workgroup: up to `wg` invocations (no more than a head's channels need), `group` of them per token's sum
  // of squares, `tokens` tokens (at least K-1, see gdn_prep.comp; fewer where shared memory is short).
  const uint32_t dmax = u32(std::max(s.dk, s.dv));
  uint32_t wg = d.tune("gdn_prep.fused.wg"), group = d.tune("gdn_prep.fused.group");
  if (!std::has_single_bit(wg) || !std::has_single_bit(group))
    fail("gdn_prep: gdn_prep.fused.wg = {} and .group = {} must be powers of two", wg, group);
  wg = std::min({wg, std::bit_ceil(dmax), std::bit_floor(d.info().max_workgroup_invocations)});
  group = std::min({group, wg, std::bit_ceil(u32(s.dk))});
  const uint32_t min_tokens = u32(s.K - 1);
  uint32_t tokens = std::max(d.tune("gdn_prep.fused.tokens"), min_tokens);
  const auto shared = [&](uint32_t tb) { return 4 * (uint64_t(tb) * (dmax + 1) + wg); };  // u, factor, group sums
  while (tokens > min_tokens && shared(tokens) > d.info().max_shared_memory) tokens = std::max(tokens / 2, min_tokens);
  if (shared(tokens) > d.info().max_shared_memory)
    fail("gdn_prep: heads of {} channels over {} tokens need {} bytes of shared memory, the device has {}", dmax, tokens,
         shared(tokens), d.info().max_shared_memory);
  const uint64_t gx = uint64_t(2 * s.nk + s.nv), gy = (uint64_t(s.T) + tokens - 1) / tokens;
  if (gx > d.info().max_workgroup_count[0] || gy > d.info().max_workgroup_count[1])
    fail("gdn_prep: {} heads x {} tokens need {} x {} workgroups, more than the device allows", gx, s.T, gx, gy);

  const struct {
    uint32_t T, C, nk, nv, dk, dv;
    float scale, eps;
  } pc{u32(s.T), u32(s.C), u32(s.nk), u32(s.nv), u32(s.dk), u32(s.dv), float(a.param("scale")), float(a.param("eps"))};
  const auto& p = d.pipeline("gdn_prep", {{0, wg}, {1, u32(s.K)}, {2, tokens}, {3, group}, {4, dmax}}, 12, sizeof pc);
  Tensor q = Tensor::device(d, s.T, s.nk * s.dk), k = Tensor::device(d, s.T, s.nk * s.dk);
  Tensor v = Tensor::device(d, s.T, s.nv * s.dv);
  Tensor beta = Tensor::device(d, s.T, s.nv), g = Tensor::device(d, s.T, s.nv);
  d.dispatch(p,
             {x.buffer(d), b.buffer(d), ap.buffer(d), w.buffer(d), A.buffer(d), dt.buffer(d), state.buffer_mut(d),
              q.buffer_mut(d), k.buffer_mut(d), v.buffer_mut(d), beta.buffer_mut(d), g.buffer_mut(d)},
             pc, uint32_t(gx), uint32_t(gy));
  a.set("q", q);
  a.set("k", k);
  a.set("v", v);
  a.set("beta", beta);
  a.set("g", g);
}

// Runs `variant` of `op` on `args` and returns them (with the outputs set).
OpArgs run_op(VariantCtx& c, const std::string& op, const std::string& variant, OpArgs args) {
  Registry::get().variant(op, variant).run(c, args);
  return args;
}

void unfused(VariantCtx& c, OpArgs& a) {
  const Tensor w = c.weights->device(a.weight("w"));
  const PrepShape s = prep_shape(a, w, a.weight("A").numel());
  const int64_t kd = s.nk * s.dk;
  OpArgs conv = run_op(c, "ssm_conv", "vulkan:channel", {{{"x", a.in("x")}, {"state", a.state("state")}}, {{"w", a.weight("w")}}, {}});
  const Tensor& u = conv.t.at("y");
  const auto slice = [&](int64_t offset, int64_t width) {
    OpArgs r = run_op(c, "slice", "vulkan:copy",
                      {{{"x", u}}, {}, {{"period", double(s.C)}, {"offset", double(offset)}, {"width", double(width)}}});
    return r.t.at("y");
  };
  const auto norm = [&](const Tensor& x, double scale) {
    OpArgs r = run_op(c, "l2norm", "vulkan:rowgroup",
                      {{{"x", x}}, {}, {{"head_dim", double(s.dk)}, {"scale", scale}, {"eps", a.param("eps")}}});
    return r.t.at("y");
  };
  a.set("q", norm(slice(0, kd), a.param("scale")));
  a.set("k", norm(slice(kd, kd), 1.0));
  a.set("v", slice(2 * kd, s.C - 2 * kd));
  OpArgs gates = run_op(c, "ssm_gates", "vulkan:elementwise", {{{"b", a.in("b")}, {"a", a.in("a")}},
                                                              {{"A", a.weight("A")}, {"dt_bias", a.weight("dt_bias")}}, {}});
  a.set("beta", gates.t.at("beta"));
  a.set("g", gates.t.at("g"));
}

}  // namespace

void register_gdn_prep_vulkan(Registry& r) {
  Variant f = vulkan_variant("gdn_prep", "vulkan:fused",
                             "one dispatch: a workgroup per (head, 16 tokens) convolves into shared memory, normalises "
                             "q and k per token, writes q, k, v (and the gates)",
                             fused, true);
  // Invocations per (head, token block), capped at the head width; tokens per workgroup (at least K-1);
  // invocations per token's sum of squares.
  f.tunables = {{"gdn_prep.fused.wg", 128}, {"gdn_prep.fused.tokens", 16}, {"gdn_prep.fused.group", 16}};
  r.add_variant(std::move(f));
  Variant u = vulkan_variant("gdn_prep", "vulkan:unfused",
                             "the separate ops' Vulkan variants in turn: ssm_conv, 3 slices, 2 l2norms, ssm_gates "
                             "(7 dispatches)",
                             unfused);
  u.status = "baseline";
  r.add_variant(std::move(u));
}

}  // namespace hl::gpu
