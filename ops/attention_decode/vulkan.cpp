// attention_decode on Vulkan: vulkan:fused_decode (attention_decode.comp: one dispatch, split keys merged by each head's
// last split).
#include <bit>

#include "ops/vulkan_variant.h"
#include "ops/rope/freq_table.h"

namespace hl::gpu {

namespace {

void fused_decode(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const Tensor &qg = a.in("qg"), &k = a.in("k"), &v = a.in("v");
  Tensor &kc = a.state("k_cache"), &vc = a.state("v_cache");
  const int64_t nq = a.iparam("n_q_heads"), nkv = a.iparam("n_kv_heads"), kv_len = a.iparam("kv_len"),
                R = a.iparam("rot_dims"), pos = a.iparam("pos0");
  if (qg.rows() != 1) fail("attention_decode vulkan:fused_decode: one token (decode) only, got {}", qg.rows());
  if (nq <= 0 || nkv <= 0 || nq % nkv || qg.cols() % (2 * nq))
    fail("attention_decode: qg's {} columns do not fit {} q / {} kv heads of query and gate halves", qg.cols(), nq, nkv);
  const int64_t D = qg.cols() / (2 * nq), W = nkv * D;
  const Tensor qn = c.weights->device(a.weight("q_norm")), kn = c.weights->device(a.weight("k_norm"));
  if (k.cols() != W || v.cols() != W || k.rows() != 1 || v.rows() != 1 || qn.numel() != D || kn.numel() != D)
    fail("attention_decode: k [{}, {}], v [{}, {}], q_norm [{}], k_norm [{}] do not fit {} kv heads of {}", k.rows(), k.cols(),
         v.rows(), v.cols(), qn.numel(), kn.numel(), nkv, D);
  if (R < 0 || R % 2 || R > D) fail("attention_decode: {} rotary dims do not fit head dim {}", R, D);
  if (kv_len < 0 || pos < 0 || kc.cols() != W || vc.cols() != W || kc.rows() < kv_len + 1 || vc.rows() < kv_len + 1)
    fail("attention_decode: KV caches [{}, {}] and [{}, {}] cannot take row {} of width {}", kc.rows(), kc.cols(), vc.rows(),
         vc.cols(), kv_len, W);
  // Keys split over workgroups per query head as vulkan:decode_split splits them: whole blocks, every split non-empty.
  const uint32_t wg = d.tune("attention_decode.fused_decode.wg"), block = std::min(wg, d.tune("attention_decode.fused_decode.block"));
  if (!std::has_single_bit(wg) || !std::has_single_bit(block))
    fail("attention_decode: workgroup size {} and key block {} must be powers of two", wg, block);
  const uint64_t L = uint64_t(kv_len) + 1, want = std::max(1u, d.tune("attention_decode.fused_decode.splits"));
  const uint64_t keys = ((L + want - 1) / want + block - 1) / block * block;
  const uint32_t splits = u32((L + keys - 1) / keys);
  const uint64_t shared = 4 * (5 * uint64_t(D) + 3 * uint64_t(wg) + 2 * block + 1);
  if (shared > d.info().max_shared_memory)
    fail("attention_decode: head dim {} needs {} bytes of shared memory, the device has {}", D, shared, d.info().max_shared_memory);
  const Tensor freq = rope_freq_table(c, a.param("theta"), R);
  Tensor o = output_tensor(d, a, "o", 1, nq * D);
  Tensor part = splits == 1 ? o : Tensor::device(d, nq * splits, D + 2);
  // One ticket counter per query head (0 between calls: each head's last split resets its own).
  Tensor tickets = c.weights->constant(fmt::format("attention_decode.tickets {}", nq), [&] { return Tensor::from_i32(IMat::Zero(1, nq)); });
  struct {
    uint32_t n_q, group, kv_len, pos, pairs, splits, split_keys;
    float eps, scale;
  } pc{u32(nq), u32(nq / nkv), u32(kv_len), u32(pos), u32(R / 2), splits, u32(keys), float(a.param("eps")),
       float(1.0 / std::sqrt(double(D)))};
  // diag (undeclared; diagnosis only, results wrong): parts of the step left out (attention_decode.comp's DIAG).
  const auto& p = d.pipeline("attention_decode", {{0, wg}, {1, u32(D)}, {2, block}, {3, d.tune("attention_decode.fused_decode.pv_full")},
                                                  {4, d.profile().get("attention_decode.fused_decode.diag", 0)}},
                             11, sizeof pc);
  const Grid g = grid(uint64_t(nq) * splits);
  d.dispatch(p, {qg.buffer(d), k.buffer(d), v.buffer(d), qn.buffer(d), kn.buffer(d), freq.buffer(d), kc.buffer_mut(d),
                 vc.buffer_mut(d), part.buffer_mut(d), o.buffer_mut(d), tickets.buffer_mut(d)},
             pc, g.x, g.y);
  a.set("o", o);
}

}  // namespace

void register_attention_decode_vulkan(Registry& r) {
  Variant v = vulkan_variant("attention_decode", "vulkan:fused_decode",
                             "one token: the q/k norms, rope, the cache append and split-key attention in one dispatch "
                             "(each workgroup forms the new key itself; each head's last split merges the head's splits)",
                             fused_decode, true);
  // Invocations per workgroup, keys per scoring step, key splits per query head (as attention.decode_split's).
  // Blocks of 16 keys (8 lanes per key at wg 128: the scoring's loads in flight per lane halve) with whole-block P V sums:
  // reports/nvidia-h200/decode-latency.md.
  v.tunables = {{"attention_decode.fused_decode.wg", 128},
                {"attention_decode.fused_decode.block", 16},
                // 32: at context 4096, 52.1 us against 63.2 at 64 and 68.1 at 16; the same splits as 64 up to context 512
                // (reports/nvidia-h200/raw/splits-10cc9db/).
                {"attention_decode.fused_decode.splits", 32},
                // 1: each block's P V sums over BLOCK keys, unrolled (the value loads issued together), the keys past the
                // block's end adding zeros; 0: a loop over the block's keys.
                {"attention_decode.fused_decode.pv_full", 1}};
  r.add_variant(std::move(v));
}

}  // namespace hl::gpu
