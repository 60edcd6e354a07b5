// Vulkan variants of the Gated DeltaNet block's own ops: ssm_conv, l2norm, ssm_gates, ssm_scan,
// gated_rmsnorm (SPEC 4.4). ssm_scan has two: block_resident (one dispatch walks every token with the
// state in registers) and per_token (one dispatch per token, the decode-loop baseline).
#include <bit>

#include "gpu/ops/vk_op.h"

namespace hl::gpu {

// The shape of one ssm_scan call, checked like the reference's (every Vulkan ssm_scan variant).
ScanShape ssm_scan_shape(OpArgs& a) {
  const Tensor &q = a.in("q"), &k = a.in("k"), &v = a.in("v"), &beta = a.in("beta"), &g = a.in("g");
  Tensor& state = a.state("state");
  const int64_t T = q.rows(), nk = a.iparam("n_k_heads"), nv = beta.cols();
  const int64_t dk = nk > 0 ? q.cols() / nk : 0, dv = nv > 0 ? v.cols() / nv : 0;
  const bool ok = nk > 0 && nv > 0 && nv % nk == 0 && dk > 0 && dv > 0 && q.cols() == nk * dk && k.cols() == q.cols() &&
                  v.cols() == nv * dv && k.rows() == T && v.rows() == T && beta.rows() == T && g.rows() == T &&
                  g.cols() == nv && state.rows() == nv && state.cols() == dk * dv;
  if (!ok)
    fail("ssm_scan: q [{}, {}], k [{}, {}], v [{}, {}], beta [{}, {}], g [{}, {}], state [{}, {}] do not fit {} key heads",
         q.rows(), q.cols(), k.rows(), k.cols(), v.rows(), v.cols(), beta.rows(), beta.cols(), g.rows(), g.cols(),
         state.rows(), state.cols(), nk);
  return {T, nk, nv, dk, dv};
}

namespace {

void ssm_conv(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const Tensor& x = a.in("x");
  const Tensor w = c.weights->device(a.weight("w"));
  Tensor& state = a.state("state");
  const int64_t T = x.rows(), C = x.cols(), K = w.cols();
  if (w.rows() != C || K < 2 || state.rows() != K - 1 || state.cols() != C)
    fail("ssm_conv: x [{}, {}], w [{}, {}], state [{}, {}] are inconsistent", T, C, w.rows(), K, state.rows(), state.cols());
  Tensor y = Tensor::device(d, T, C);
  const struct {
    uint32_t T, C;
  } pc{u32(T), u32(C)};
  // Workgroups: x over channels, y over blocks of `tokens` tokens (at least K-1: see ssm_conv.comp).
  const uint32_t wg = d.tune("ssm_conv.channel.wg"), tb = std::max(d.tune("ssm_conv.channel.tokens"), u32(K - 1));
  const uint64_t gx = (uint64_t(C) + wg - 1) / wg, gy = (uint64_t(T) + tb - 1) / tb;
  if (gx > d.info().max_workgroup_count[0] || gy > d.info().max_workgroup_count[1])
    fail("ssm_conv: {} channels x {} tokens need {} x {} workgroups, more than the device allows", C, T, gx, gy);
  const auto& p = d.pipeline("ssm_conv", {{0, wg}, {1, u32(K)}, {2, tb}}, 4, sizeof pc);
  d.dispatch(p, {x.buffer(d), w.buffer(d), state.buffer_mut(d), y.buffer_mut(d)}, pc, uint32_t(gx), uint32_t(gy));
  a.set("y", y);
}

// The per-head norms: `group` invocations (a power of two) per group of D columns of a row, wg / group
// groups per workgroup; push constants {groups, D, ...}.
template <class Push>
void rowgroup(Device& d, const std::string& shader, const std::vector<BufferPtr>& buffers, const Push& pc) {
  const uint32_t wg = d.tune(shader + ".rowgroup.wg"), group = d.tune(shader + ".rowgroup.group");
  if (!std::has_single_bit(wg) || !std::has_single_bit(group))
    fail("{}: {}.rowgroup.wg = {} and .group = {} must be powers of two", shader, shader, wg, group);
  const uint32_t gi = std::min({group, wg, std::bit_ceil(pc.D)});
  const auto& p = d.pipeline(shader, {{0, wg}, {1, gi}}, u32(buffers.size()), sizeof pc);
  const Grid g = grid((uint64_t(pc.groups) + wg / gi - 1) / (wg / gi));
  d.dispatch(p, buffers, pc, g.x, g.y);
}

void l2norm(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const Tensor& x = a.in("x");
  const int64_t D = a.iparam("head_dim");
  if (D <= 0 || x.cols() % D) fail("l2norm: {} columns are not a multiple of the head dim {}", x.cols(), D);
  Tensor y = Tensor::device(d, x.rows(), x.cols());
  const struct {
    uint32_t groups, D;
    float scale, eps;
  } pc{u32(x.numel() / D), u32(D), float(a.param("scale")), float(a.param("eps"))};
  rowgroup(d, "l2norm", {x.buffer(d), y.buffer_mut(d)}, pc);
  a.set("y", y);
}

void gated_rmsnorm(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const Tensor &o = a.in("o"), &z = a.in("z");
  const Tensor gain = c.weights->device(a.weight("gain"));
  const int64_t D = gain.numel();
  if (o.rows() != z.rows() || o.cols() != z.cols())
    fail("gated_rmsnorm: o [{}, {}] and z [{}, {}] differ", o.rows(), o.cols(), z.rows(), z.cols());
  if (D == 0 || o.cols() % D) fail("gated_rmsnorm: {} columns are not a multiple of the gain length {}", o.cols(), D);
  Tensor y = Tensor::device(d, o.rows(), o.cols());
  const struct {
    uint32_t groups, D;
    float eps;
  } pc{u32(o.numel() / D), u32(D), float(a.param("eps"))};
  rowgroup(d, "gated_rmsnorm", {o.buffer(d), z.buffer(d), gain.buffer(d), y.buffer_mut(d)}, pc);
  a.set("y", y);
}

void ssm_gates(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const Tensor &b = a.in("b"), &ap = a.in("a");
  const Tensor A = c.weights->device(a.weight("A")), dt = c.weights->device(a.weight("dt_bias"));
  const int64_t nv = A.numel();
  if (b.cols() != nv || ap.cols() != nv || dt.numel() != nv || ap.rows() != b.rows())
    fail("ssm_gates: b [{}, {}], a [{}, {}], A [{}], dt_bias [{}] are inconsistent", b.rows(), b.cols(), ap.rows(),
         ap.cols(), nv, dt.numel());
  Tensor beta = Tensor::device(d, b.rows(), nv), g = Tensor::device(d, b.rows(), nv);
  const struct {
    uint32_t n, nv;
  } pc{u32(b.numel()), u32(nv)};
  const uint32_t wg = d.tune("ssm_gates.elementwise.wg");
  const auto& p = d.pipeline("ssm_gates", {{0, wg}}, 6, sizeof pc);
  const Grid gr = grid((uint64_t(pc.n) + wg - 1) / wg);
  d.dispatch(p, {b.buffer(d), ap.buffer(d), A.buffer(d), dt.buffer(d), beta.buffer_mut(d), g.buffer_mut(d)}, pc, gr.x, gr.y);
  a.set("beta", beta);
  a.set("g", g);
}

// ssm_scan: both variants run ssm_scan_columns.comp, block_resident over all tokens at once, per_token
// once per token (the state then goes through device memory every token).
void ssm_scan(VariantCtx& c, OpArgs& a, bool per_token) {
  Device& d = c.device();
  const Tensor &q = a.in("q"), &k = a.in("k"), &v = a.in("v"), &beta = a.in("beta"), &g = a.in("g");
  Tensor& state = a.state("state");
  const ScanShape sh = ssm_scan_shape(a);  // not a structured binding: clang 14 cannot capture one
  const int64_t T = sh.T, nk = sh.nk, nv = sh.nv, dk = sh.dk, dv = sh.dv;

  // Tunables: columns per workgroup, invocations per column (a power of two), tokens staged at a time.
  const std::string key = std::string("ssm_scan.") + (per_token ? "per_token." : "block_resident.");
  uint32_t cols = d.tune(key + "cols"), split = d.tune(key + "split");
  uint32_t stage = per_token ? 1 : std::max(d.tune(key + "stage"), 1u);
  if (cols == 0 || !std::has_single_bit(split))
    fail("ssm_scan: {}cols = {} must be positive and {}split = {} a power of two", key, cols, key, split);
  cols = std::min(cols, u32(dv));
  split = std::min(split, std::bit_floor(u32(dk)));
  const uint32_t wg = cols * split;
  if (wg > d.info().max_workgroup_invocations)
    fail("ssm_scan: {} columns x {} invocations exceed the device's {} invocations per workgroup", cols, split,
         d.info().max_workgroup_invocations);
  // Shared memory: k, q, v, decay and beta of `stage` tokens, and a partial sum per invocation. Each
  // invocation also prefetches its share of the next stage's k and q in registers: at most 2 x 32.
  const auto shared = [&](uint32_t s) { return 4 * (uint64_t(s) * (2 * dk + cols + 2) + wg); };
  while (stage > 1 && (shared(stage) > d.info().max_shared_memory || stage * dk > 32 * wg)) stage /= 2;
  if (shared(stage) > d.info().max_shared_memory)
    fail("ssm_scan: d_k = {} with {} invocations needs {} bytes of shared memory, the device has {}", dk, wg, shared(stage),
         d.info().max_shared_memory);

  const auto& p = d.pipeline("ssm_scan_columns", {{0, wg}, {1, cols}, {2, split}, {3, u32(dk)}, {4, stage}}, 7, 7 * 4);
  Tensor o = Tensor::device(d, T, v.cols());
  const std::vector<BufferPtr> bufs{q.buffer(d), k.buffer(d), v.buffer(d), beta.buffer(d),
                                    g.buffer(d), state.buffer_mut(d), o.buffer_mut(d)};
  struct {
    uint32_t t0, T, nk, nv, dv, blocks, tiled;
  } pc{0, u32(T), u32(nk), u32(nv), u32(dv), (u32(dv) + cols - 1) / cols, a.p.count("tiled") && a.param("tiled") != 0};
  const Grid gr = grid(uint64_t(nv) * pc.blocks);
  if (!per_token) {
    d.dispatch(p, bufs, pc, gr.x, gr.y);
  } else {
    for (pc.t0 = 0, pc.T = 1; pc.t0 < uint32_t(T); ++pc.t0) d.dispatch(p, bufs, pc, gr.x, gr.y);
  }
  a.set("o", o);
}

}  // namespace

void register_vk_deltanet(Registry& r) {
  r.add_variant(vulkan_variant("ssm_conv", "vulkan:channel",
                               "an invocation per (channel, 16 tokens) walks them with its window in registers", ssm_conv,
                               true));
  const char* rowgroup_summary = "32 invocations per head, several heads per workgroup, subgroup or shared sums";
  r.add_variant(vulkan_variant("l2norm", "vulkan:rowgroup", rowgroup_summary, l2norm, true));
  r.add_variant(vulkan_variant("gated_rmsnorm", "vulkan:rowgroup", rowgroup_summary, gated_rmsnorm, true));
  r.add_variant(vulkan_variant("ssm_gates", "vulkan:elementwise", "an invocation per (token, value head)", ssm_gates, true));
  r.add_variant(vulkan_variant("ssm_scan", "vulkan:block_resident",
                               "one dispatch; a workgroup per (value head, column block) keeps its state slice in "
                               "registers over all tokens",
                               [](VariantCtx& c, OpArgs& a) { ssm_scan(c, a, false); }));  // chunked is the default
  r.add_variant(vulkan_variant("ssm_scan", "vulkan:per_token",
                               "one dispatch per token, the state through device memory each time (decode-loop baseline)",
                               [](VariantCtx& c, OpArgs& a) { ssm_scan(c, a, true); }, false, true));
}

}  // namespace hl::gpu
