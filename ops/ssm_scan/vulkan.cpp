// ssm_scan on Vulkan, the recurrent form: vulkan:block_resident (one dispatch walks every token with the state
// in registers: decode, and vulkan:chunked's decode steps) and vulkan:per_token (one dispatch per token, the
// decode-loop baseline), both on ssm_scan_columns.comp.
#include <bit>

#include "ops/ssm_scan/vulkan_common.h"

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

// Declared in vulkan_common.h.
Tensor ssm_scan_columns(Device& d, OpArgs& a, const std::string& key, bool per_token, const ScanNorm* norm) {
  const Tensor &q = a.in("q"), &k = a.in("k"), &v = a.in("v"), &beta = a.in("beta"), &g = a.in("g");
  Tensor& state = a.state("state");
  const ScanShape sh = ssm_scan_shape(a);  // not a structured binding: clang 14 cannot capture one
  const int64_t T = sh.T, nk = sh.nk, nv = sh.nv, dk = sh.dk, dv = sh.dv;

  // Tunables: columns per workgroup (with the norm: the whole head), invocations per column (a power of two), tokens
  // staged at a time.
  uint32_t cols = norm ? u32(dv) : d.tune(key + "cols"), split = d.tune(key + "split");
  uint32_t stage = per_token ? 1 : std::max(d.tune(key + "stage"), 1u);
  const uint32_t contig = d.tune(key + "contig") != 0;
  const uint32_t unroll = !per_token && !norm && d.tune(key + "unroll") != 0;  // a chunk's tokens unrolled
  const uint32_t acc = d.tune(key + "acc");  // partial sums per dot product
  if (acc != 1 && acc != 2 && acc != 4) fail("ssm_scan: {}acc = {} must be 1, 2 or 4", key, acc);
  if (cols == 0 || !std::has_single_bit(split))
    fail("ssm_scan: {}cols = {} must be positive and {}split = {} a power of two", key, cols, key, split);
  cols = std::min(cols, u32(dv));
  split = std::min(split, std::bit_floor(u32(dk)));
  if (norm) split = std::max(1u, std::min(split, std::bit_floor(d.info().max_workgroup_invocations / cols)));
  const uint32_t wg = cols * split;
  if (wg > d.info().max_workgroup_invocations)
    fail("ssm_scan: {} columns x {} invocations exceed the device's {} invocations per workgroup", cols, split,
         d.info().max_workgroup_invocations);
  // Shared memory: k, q, v, decay and beta of `stage` tokens, a partial sum per invocation, and the workgroup sum's
  // partials. Each invocation also prefetches its share of the next stage's k and q in registers: at most 2 x 32.
  // (contig: each invocation's run of d_k rounded to whole vec4s, plus a vec4 of padding.)
  const uint64_t rc = (uint64_t(dk + split - 1) / split + 3) / 4 * 4, krow = contig ? split * (rc + 4) : uint64_t(dk);
  const auto shared = [&](uint32_t s) { return 4 * (uint64_t(s) * (2 * krow + cols + 2) + 2 * wg + 1); };
  while (stage > 1 && (shared(stage) > d.info().max_shared_memory || stage * dk > 32 * wg)) stage /= 2;
  if (shared(stage) > d.info().max_shared_memory)
    fail("ssm_scan: d_k = {} with {} invocations needs {} bytes of shared memory, the device has {}", dk, wg, shared(stage),
         d.info().max_shared_memory);

  const auto& p = d.pipeline("ssm_scan_columns", {{0, wg}, {1, cols}, {2, split}, {3, u32(dk)}, {4, stage}, {5, norm ? 1u : 0u}, {6, contig}, {9, unroll},
                                                         {10, d.info().min_subgroup_size}, {11, acc}},
                             9, 8 * 4);
  Tensor o = Tensor::device(d, T, v.cols());
  // Without the norm, z and gain are bound to q (never read).
  const std::vector<BufferPtr> bufs{q.buffer(d),        k.buffer(d),        v.buffer(d),
                                    beta.buffer(d),     g.buffer(d),        state.buffer_mut(d),
                                    o.buffer_mut(d),    norm ? norm->z.buffer(d) : q.buffer(d),
                                    norm ? norm->gain.buffer(d) : q.buffer(d)};
  struct {
    uint32_t t0, T, nk, nv, dv, blocks, tiled;
    float eps;
  } pc{0, u32(T), u32(nk), u32(nv), u32(dv), (u32(dv) + cols - 1) / cols, a.p.count("tiled") && a.param("tiled") != 0,
       norm ? norm->eps : 0.0f};
  const Grid gr = grid(uint64_t(nv) * pc.blocks);
  if (!per_token) {
    d.dispatch(p, bufs, pc, gr.x, gr.y);
  } else {
    for (pc.t0 = 0, pc.T = 1; pc.t0 < uint32_t(T); ++pc.t0) d.dispatch(p, bufs, pc, gr.x, gr.y);
  }
  return o;
}

namespace {

// ssm_scan: both variants run ssm_scan_columns.comp, block_resident over all tokens at once, per_token
// once per token (the state then goes through device memory every token).
void ssm_scan(VariantCtx& c, OpArgs& a, bool per_token) {
  const std::string key = std::string("ssm_scan.") + (per_token ? "per_token." : "block_resident.");
  a.set("o", ssm_scan_columns(c.device(), a, key, per_token, nullptr));
}

}  // namespace

void register_ssm_scan_vulkan(Registry& r) {
  Variant br = vulkan_variant("ssm_scan", "vulkan:block_resident",
                              "one dispatch; a workgroup per (value head, column block) keeps its state slice in "
                              "registers over all tokens",
                              [](VariantCtx& c, OpArgs& a) { ssm_scan(c, a, false); });
  br.status = "baseline";
  // Value columns per workgroup; invocations sharing a column (the d_k dot products); tokens staged at a time; 1: each
  // invocation's d_k entries contiguous, k and q read 16 bytes at a time (0: every split-th entry, word reads); 1: a
  // staged chunk's tokens unrolled in the kernel; partial sums per invocation in each token's dot products.
  br.tunables = {{"ssm_scan.block_resident.cols", 32}, {"ssm_scan.block_resident.split", 8},
                 {"ssm_scan.block_resident.stage", 16}, {"ssm_scan.block_resident.contig", 0},
                 {"ssm_scan.block_resident.unroll", 1}, {"ssm_scan.block_resident.acc", 1}};
  r.add_variant(std::move(br));
  Variant pt = vulkan_variant("ssm_scan", "vulkan:per_token",
                              "one dispatch per token, the state through device memory each time (decode-loop baseline)",
                              [](VariantCtx& c, OpArgs& a) { ssm_scan(c, a, true); }, false, true);
  pt.status = "baseline";
  pt.tunables = {{"ssm_scan.per_token.cols", 32}, {"ssm_scan.per_token.split", 8}, {"ssm_scan.per_token.contig", 0},
                 {"ssm_scan.per_token.acc", 1}};
  r.add_variant(std::move(pt));
}

}  // namespace hl::gpu
