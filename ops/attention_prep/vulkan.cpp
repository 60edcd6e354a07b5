// attention_prep on Vulkan: vulkan:fused, the q/gate split, both per-head rmsnorms and both ropes of a prompt chunk in
// one dispatch (attention_prep.comp), where the parts take six (two slices, two norms, two ropes).
#include <bit>
#include <numeric>

#include "ops/attention_prep/parts.h"
#include "ops/rope/freq_table.h"
#include "ops/vulkan_variant.h"

namespace hl::gpu {

namespace {

void fused(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const Tensor &qg = a.in("qg"), &k = a.in("k");
  const int64_t nq = a.iparam("n_q_heads"), R = a.iparam("rot_dims"), T = qg.rows();
  if (nq <= 0 || qg.cols() % (2 * nq)) fail("attention_prep: qg's {} columns are not 2 x {} heads", qg.cols(), nq);
  const int64_t D = qg.cols() / (2 * nq);
  if (R < 0 || R % 2 || R > D) fail("attention_prep: {} rotary dims do not fit heads of {} (even, at most the head)", R, D);
  if (T == 0 || k.rows() != T || k.cols() == 0 || k.cols() % D)
    fail("attention_prep: qg [{}, {}] and k [{}, {}] do not fit heads of {}", T, qg.cols(), k.rows(), k.cols(), D);
  const Tensor qn = c.weights->device(a.weight("q_norm")), kn = c.weights->device(a.weight("k_norm"));
  if (qn.numel() != D || kn.numel() != D)
    fail("attention_prep: gains of {} and {} values do not fit heads of {}", qn.numel(), kn.numel(), D);
  const int64_t nkv = k.cols() / D, pos0 = a.iparam("pos0");
  u32(pos0 + T);  // the last position fits 32 bits

  // GROUP invocations per head: 8 values each by default, halved until GROUP divides R / 2 (each invocation then holds
  // both values of its pairs), at most the workgroup.
  const uint32_t wg = d.tune("attention_prep.fused.wg"), tuned = d.tune("attention_prep.fused.group");
  uint32_t group = tuned ? tuned : std::bit_ceil(std::max<uint32_t>(u32(D) / 8, 1));
  if (!std::has_single_bit(wg) || !std::has_single_bit(group))
    fail("attention_prep: attention_prep.fused.wg = {} and .group = {} must be powers of two", wg, tuned);
  group = std::min({group, wg, std::bit_ceil(u32(D))});
  while (R > 0 && (R / 2) % group) group /= 2;
  const Tensor table = rope_freq_table(c, a.param("theta"), R);
  const struct {
    uint32_t groups, nq, nkv, pos0;
    float eps;
  } pc{u32(T * (nq + nkv)), u32(nq), u32(nkv), u32(pos0), float(a.param("eps"))};
  const auto& p = d.pipeline("attention_prep", {{0, wg}, {1, group}, {2, u32(D)}, {3, u32(R / 2 / group)}}, 8, sizeof pc);
  Tensor q = Tensor::device(d, T, nq * D), gate = Tensor::device(d, T, nq * D), ko = Tensor::device(d, T, nkv * D);
  const Grid g = grid((uint64_t(pc.groups) + wg / group - 1) / (wg / group));
  d.dispatch(p, {qg.buffer(d), k.buffer(d), qn.buffer(d), kn.buffer(d), table.buffer(d), q.buffer_mut(d), gate.buffer_mut(d),
                 ko.buffer_mut(d)},
             pc, g.x, g.y);
  a.set("q", q);
  a.set("gate", gate);
  a.set("k", ko);
}

// The parts' Vulkan variants in turn, as the unfused forward pass runs them: two slices, two rmsnorms, two ropes.
void unfused(VariantCtx& c, OpArgs& a) { attention_prep_parts(c, a, "vulkan:copy", "vulkan:rowgroup", "vulkan:neox"); }

}  // namespace

void register_attention_prep_vulkan(Registry& r) {
  Variant v = vulkan_variant("attention_prep", "vulkan:fused",
                             "one dispatch: a group of invocations per head (query heads, then key heads) loads the head "
                             "(and the query's gate), normalises it and rotates its pairs in registers, writes q, gate, k",
                             fused);
  // Experimental until timed on a GPU (*=vulkan keeps the parts; attention_prep=vulkan:fused selects it).
  v.status = "experimental";
  // Invocations per workgroup; per head (0: 8 values each, halved until the group divides the rotated half).
  v.tunables = {{"attention_prep.fused.wg", 256}, {"attention_prep.fused.group", 0}};
  r.add_variant(std::move(v));
  Variant u = vulkan_variant("attention_prep", "vulkan:unfused",
                             "the parts' Vulkan variants in turn: 2 slices, 2 rmsnorms, 2 ropes (6 dispatches)", unfused);
  u.status = "baseline";
  r.add_variant(std::move(u));
}

}  // namespace hl::gpu
