// attention on Vulkan: vulkan:flash (a workgroup per query row, online softmax over key blocks) and
// vulkan:decode_split (flash-decoding for T == 1), with the helpers every Vulkan attention variant shares: the
// KV-cache append (attention_append.comp) and the merge of split key ranges (attention_merge.comp).
#include <bit>
#include <cmath>

#include "ops/attention/vulkan_common.h"

namespace hl::gpu {

AttnShape attention_shape(OpArgs& a) {
  const Tensor &q = a.in("q"), &k = a.in("k"), &v = a.in("v"), &gate = a.in("gate");
  const Tensor &kc = a.state("k_cache"), &vc = a.state("v_cache");
  AttnShape s{q.rows(), a.iparam("n_q_heads"), a.iparam("n_kv_heads"), 0, a.iparam("kv_len")};
  if (s.n_q <= 0 || s.n_kv <= 0 || s.n_q % s.n_kv || q.cols() % s.n_q)
    fail("attention: {} query columns do not fit {} q / {} kv heads", q.cols(), s.n_q, s.n_kv);
  s.D = q.cols() / s.n_q;
  const int64_t W = s.n_kv * s.D;
  if (k.cols() != W || v.cols() != W || gate.cols() != q.cols() || k.rows() != s.T || v.rows() != s.T ||
      gate.rows() != s.T)
    fail("attention: shapes q [{}, {}], k [{}, {}], v [{}, {}], gate [{}, {}] do not fit {} q / {} kv heads", q.rows(),
         q.cols(), k.rows(), k.cols(), v.rows(), v.cols(), gate.rows(), gate.cols(), s.n_q, s.n_kv);
  if (s.kv_len < 0 || kc.cols() != W || vc.cols() != W || kc.rows() < s.kv_len + s.T || vc.rows() < s.kv_len + s.T)
    fail("attention: KV caches [{}, {}] and [{}, {}] cannot take rows [{}, {}) of width {}", kc.rows(), kc.cols(),
         vc.rows(), vc.cols(), s.kv_len, s.kv_len + s.T, W);
  return s;
}

AttnShape attention_append_kv(Device& d, OpArgs& a) {
  const AttnShape s = attention_shape(a);
  const int64_t W = s.n_kv * s.D;
  const Tensor &k = a.in("k"), &v = a.in("v");
  Tensor &kc = a.state("k_cache"), &vc = a.state("v_cache");
  struct {
    uint32_t n, start;
  } pc{u32(s.T * W), u32(s.kv_len * W)};
  if (pc.n > 0) {
    const uint32_t wg = d.tune("attention.append.wg");
    const Grid g = grid((uint64_t(pc.n) + 4 * wg - 1) / (4 * wg));  // 4 floats per invocation (attention_append.comp)
    d.dispatch(d.pipeline("attention_append", {{0, wg}}, 4, sizeof pc),
               {k.buffer(d), v.buffer(d), kc.buffer_mut(d), vc.buffer_mut(d)}, pc, g.x, g.y);
  }
  return s;
}

void attention_merge(Device& d, const Tensor& gate, const Tensor& part, Tensor& o, const AttnShape& s, uint32_t splits,
                     uint32_t wg, uint32_t split_keys) {
  struct {
    uint32_t rows, D, splits, n_q, kv_len, split_keys;
  } mc{u32(s.T * s.n_q), u32(s.D), splits, u32(s.n_q), u32(s.kv_len), split_keys};
  // Rows per workgroup as attention_merge.comp takes them: ceil(D / 4) invocations per row, at most the workgroup.
  const uint32_t ipr = std::min((mc.D + 3) / 4, wg), rpw = wg / ipr;
  const Grid mg = grid((mc.rows + rpw - 1) / rpw);
  d.dispatch(d.pipeline("attention_merge", {{0, wg}}, 3, sizeof mc), {part.buffer(d), gate.buffer(d), o.buffer_mut(d)}, mc,
             mg.x, mg.y);
}

namespace {

// Keys one workgroup of attention_flash.comp may walk. lavapipe (Mesa 22.3) ends the loops of a shader
// invocation once it has run 65535 loop iterations in all (LP_MAX_TGSI_LOOP_ITERATIONS), silently; longer
// key ranges are split over workgroups and merged, on every device (a merge of a few splits costs little).
uint64_t loop_budget_keys(uint64_t D, uint64_t wg, uint64_t block) {
  const uint64_t lanes = wg / block, dims = (D + wg - 1) / wg;
  const uint64_t per_block = 1 + (D + lanes - 1) / lanes + lanes + block * (2 + dims);  // as if nothing unrolled
  return std::max<uint64_t>(1, 60000 / per_block) * block;                            // 60000: the rest of main
}

// Attention of every query row over its keys in ranges of at most `want_keys` keys (and the loop budget):
// one range writes o directly; several write partials [acc (D), max, sum] per (row, range) that
// attention_merge.comp combines. Tunables attention.<variant>.{wg, block, merge_wg}.
Tensor attend(Device& d, const std::string& variant, OpArgs& a, const AttnShape& s, uint64_t want_keys) {
  const std::string key = "attention." + variant + ".";
  const uint32_t wg = d.tune(key + "wg");
  const uint32_t block = std::min(wg, d.tune(key + "block"));
  if (!std::has_single_bit(wg) || !std::has_single_bit(block))
    fail("attention: workgroup size {} and key block {} must be powers of two", wg, block);
  const uint64_t shared = 4 * (uint64_t(s.D) + wg + 2 * block);
  if (shared > d.info().max_shared_memory)
    fail("attention: head dim {} with workgroups of {} needs {} bytes of shared memory, the device has {}", s.D, wg,
         shared, d.info().max_shared_memory);
  const uint64_t L = s.kv_len + s.T;  // keys of the last query row
  const uint64_t keys = std::min({want_keys, loop_budget_keys(s.D, wg, block), L});
  const uint32_t splits = u32((L + keys - 1) / keys);
  Tensor o = Tensor::device(d, s.T, s.n_q * s.D);
  Tensor part = splits == 1 ? o : Tensor::device(d, s.T * s.n_q * splits, s.D + 2);
  if (splits > 1 && part.bytes() > d.info().max_storage_buffer_range)
    fail("attention: {} tokens over {} keys need {} bytes of partial results; use shorter prompt chunks", s.T, L,
         part.bytes());
  struct {
    uint32_t rows, n_q, group, kv_len, splits, split_keys;
    float scale;
  } pc{u32(s.T * s.n_q), u32(s.n_q), u32(s.n_q / s.n_kv), u32(s.kv_len), splits, u32(keys),
       float(1.0 / std::sqrt(double(s.D)))};
  const uint32_t D = u32(s.D);
  const auto& p = d.pipeline("attention_flash", {{0, wg}, {1, D}, {2, (D + wg - 1) / wg}, {3, block}}, 5, sizeof pc);
  const Grid g = grid(uint64_t(pc.rows) * splits);
  d.dispatch(p, {a.in("q").buffer(d), a.t.at("k_cache").buffer(d), a.t.at("v_cache").buffer(d), a.in("gate").buffer(d),
                 part.buffer_mut(d)},
             pc, g.x, g.y);
  if (splits > 1) attention_merge(d, a.in("gate"), part, o, s, splits, d.tune(key + "merge_wg"));
  return o;
}

void flash(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const AttnShape s = attention_append_kv(d, a);
  a.set("o", s.T > 0 ? attend(d, "flash", a, s, d.tune("attention.flash.max_keys"))
                     : Tensor::device(d, 0, s.n_q * s.D));
}

// Flash-decoding: the one query row's keys split over up to attention.decode_split.splits workgroups per
// head (whole key blocks each), merged by a second kernel. Prompt chunks (T > 1) go to vulkan:flash.
void decode_split(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const AttnShape s = attention_append_kv(d, a);
  const uint64_t L = uint64_t(s.kv_len) + 1, block = d.tune("attention.decode_split.block");
  const uint64_t splits = std::max(1u, d.tune("attention.decode_split.splits"));
  const uint64_t keys = (L + splits - 1) / splits;
  a.set("o", attend(d, "decode_split", a, s, (keys + block - 1) / block * block));
}

}  // namespace

void register_attention_vulkan(Registry& r) {
  Variant flash_v = vulkan_variant("attention", "vulkan:flash",
                                   "append k, v; a workgroup per (token, query head), online softmax over key blocks", flash);
  flash_v.status = "baseline";
  // Keys per online-softmax block (a power of two <= wg); keys one workgroup walks before the range is split.
  flash_v.tunables = {{"attention.flash.block", 16, {{"amd-rdna4", 32}}}, {"attention.flash.max_keys", UINT32_MAX}};
  r.add_variant(std::move(flash_v));
  Variant split = vulkan_variant("attention", "vulkan:decode_split",
                                 "T = 1: keys split over workgroups, partials merged by a second kernel; T > 1: flash",
                                 decode_split);
  split.status = "baseline";
  split.delegate = [](VariantCtx&, const OpArgs& a) { return a.in("q").rows() == 1 ? "" : "vulkan:flash"; };
  // Keys per block; KV slices per head at decode (merged afterwards).
  split.tunables = {{"attention.decode_split.block", 32}, {"attention.decode_split.splits", 64}};
  r.add_variant(std::move(split));
}

}  // namespace hl::gpu
