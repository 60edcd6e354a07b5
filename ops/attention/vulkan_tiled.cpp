// Vulkan variant attention = vulkan:tiled (the family default): flash-attention-style query tiles for prompt chunks
// (attention_tiled.comp): a workgroup takes `rows` query rows that share one KV head (tokens x the G query
// heads of a GQA group) and streams that head's K/V through shared memory `keys` rows at a time, so K/V are
// read once per query tile instead of once per (query, head) as in vulkan:flash. Long key ranges are split
// over workgroups (lavapipe's loop limit; too few tiles for the device) and merged by attention_merge.comp.
// Decode (T == 1) is vulkan:decode_split's.
#include <bit>
#include <cmath>

#include "ops/attention/vulkan_common.h"

namespace hl::gpu {

namespace {

// Tile shape and the per-invocation work split of attention_tiled.comp (its specialization constants).
struct Tiles {
  uint32_t wg, rows, keys, ns, dl, nd, nr;
};

uint64_t shared_bytes(uint64_t rows, uint64_t keys, uint64_t dv) { return 16 * (rows + keys) * dv + 4 * (rows * keys + 3 * rows); }

Tiles tiles(const Device& d, int64_t D) {
  Tiles t{d.tune("attention.tiled.wg"), d.tune("attention.tiled.rows"), d.tune("attention.tiled.keys"), 0, 0, 0, 0};
  if (!std::has_single_bit(t.wg) || !std::has_single_bit(t.keys) || t.keys > t.wg || t.rows == 0)
    fail("attention: tiled needs power-of-two wg {} >= keys {}, and rows {} > 0", t.wg, t.keys, t.rows);
  const uint64_t dv = (uint64_t(D) + 3) / 4;
  // Fewer query rows (then keys) per tile where the head dim does not fit shared memory.
  while (shared_bytes(t.rows, t.keys, dv) > d.info().max_shared_memory && (t.rows > 1 || t.keys > 1))
    (t.rows > 1 ? t.rows : t.keys) /= 2;
  if (shared_bytes(t.rows, t.keys, dv) > d.info().max_shared_memory)
    fail("attention: head dim {} does not fit this device's {} bytes of shared memory", D, d.info().max_shared_memory);
  t.ns = (t.rows + t.wg / t.keys - 1) / (t.wg / t.keys);
  t.dl = u32(std::min<uint64_t>(t.wg, dv));
  t.nd = u32((dv + t.dl - 1) / t.dl);
  t.nr = (t.rows + t.wg / t.dl - 1) / (t.wg / t.dl);
  return t;
}

// Keys one workgroup may walk on lavapipe, which silently ends an invocation's loops after 65535
// iterations in all: loop trips of one key block and of the rest, counted as if nothing were unrolled.
uint64_t loop_budget_keys(const Tiles& t, uint64_t D) {
  const uint64_t dv = (D + 3) / 4, stage = (t.keys * dv * 4 + t.wg - 1) / t.wg, per_row = (t.rows + t.wg - 1) / t.wg;
  const uint64_t block = 1 + 2 * stage + dv * (1 + t.ns) + 2 * t.ns + per_row * (2 + 2 * t.keys) +
                         t.nr * t.nd + t.keys * (1 + t.nd * (1 + t.nr)) + t.nr * (1 + t.nd);
  const uint64_t rest = (t.rows * dv * 4 + t.wg - 1) / t.wg + per_row + t.nr * t.nd + t.nr * (1 + 4 * t.nd);
  return std::max<uint64_t>(1, (60000 - rest) / block) * t.keys;
}

void tiled(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const AttnShape s = attention_append_kv(d, a);
  const Tiles t = tiles(d, s.D);
  const TiledAttn k{"attention_tiled",
                    {{0, t.wg}, {1, u32(s.D)}, {2, t.rows}, {3, t.keys}, {4, t.ns}, {5, t.dl}, {6, t.nd}, {7, t.nr}},
                    t.rows,
                    t.keys,
                    d.info().driver_id == VK_DRIVER_ID_MESA_LLVMPIPE ? loop_budget_keys(t, s.D) : 0,
                    false,
                    [&](const char* p) { return d.tune(std::string("attention.tiled.") + p); }};
  a.set("o", attention_tiled_run(d, a, s, k));
}

}  // namespace

Tensor attention_tiled_run(Device& d, OpArgs& a, const AttnShape& s, const TiledAttn& k) {
  const uint64_t G = s.n_q / s.n_kv, L = s.kv_len + s.T;  // keys of the last query row
  const uint64_t row_tiles = (s.T * G + k.rows - 1) / k.rows, groups = s.n_kv * row_tiles;
  // Splits: as lavapipe's loop limit and max_keys require, and more while the tiles alone would leave the
  // device idle (fewer than min_groups workgroups), down to split_min_keys keys each.
  uint64_t keys = std::min<uint64_t>(L, k.tune("max_keys"));
  if (k.budget_keys) keys = std::min(keys, k.budget_keys);
  const uint64_t wanted = (k.tune("min_groups") + groups - 1) / groups;
  const uint64_t idle = std::min(wanted, std::max<uint64_t>(1, L / std::max(1u, k.tune("split_min_keys"))));
  keys = std::min(keys, (L + idle - 1) / idle);
  keys = (keys + k.keys - 1) / k.keys * k.keys;  // whole key blocks
  const uint32_t splits = u32((L + keys - 1) / keys);
  Tensor o = Tensor::device(d, s.T, s.n_q * s.D);
  Tensor part = splits == 1 ? o : Tensor::device(d, s.T * s.n_q * splits, s.D + 2);
  if (part.bytes() > d.info().max_storage_buffer_range)
    fail("attention: {} tokens over {} keys need {} bytes of partial results; use shorter prompt chunks", s.T, L,
         part.bytes());
  struct {
    uint32_t T, n_q, group, kv_len, tiles, splits, split_keys;
    float scale;
  } pc{u32(s.T), u32(s.n_q), u32(G), u32(s.kv_len), u32(row_tiles), splits, u32(keys), float(1.0 / std::sqrt(double(s.D)))};
  const auto& p = d.pipeline(k.shader, k.spec, k.appends ? 7 : 5, sizeof pc, k.full_subgroups);
  const Grid g = grid(groups * splits);
  if (k.appends) {
    d.dispatch(p, {a.in("q").buffer(d), a.state("k_cache").buffer_mut(d), a.state("v_cache").buffer_mut(d),
                   a.in("gate").buffer(d), part.buffer_mut(d), a.in("k").buffer(d), a.in("v").buffer(d)},
               pc, g.x, g.y);
  } else {
    const Tensor &kc = k.keys_buf ? *k.keys_buf : a.t.at("k_cache"), &vc = k.values_buf ? *k.values_buf : a.t.at("v_cache");
    d.dispatch(p, {a.in("q").buffer(d), kc.buffer(d), vc.buffer(d), a.in("gate").buffer(d), part.buffer_mut(d)}, pc, g.x,
               g.y);
  }
  if (splits > 1) attention_merge(d, a.in("gate"), part, o, s, splits, k.tune("merge_wg"), u32(keys));
  return o;
}

void register_attention_vulkan_tiled(Registry& r) {
  Variant v = vulkan_variant("attention", "vulkan:tiled",
                               "append k, v; a workgroup per tile of query rows sharing a KV head walks K/V tiles "
                               "through shared memory (online softmax); T = 1: decode_split",
                               tiled, true);
  // Decode: flash-decoding. Prompt chunks on cooperative matrices where the device has them (tunable coopmat: 1
  // vulkan:flash_coopmat, 2 vulkan:flash_rows; head dims of whole 16s): their f16 products run several times faster
  // than these f32 tiles.
  v.delegate = [](VariantCtx& c, const OpArgs& a) -> std::string {
    if (a.in("q").rows() <= 1) return "vulkan:decode_split";
    const Device& d = c.device();
    const int64_t nq = a.iparam("n_q_heads");
    const bool whole = nq > 0 && a.in("q").cols() % nq == 0 && (a.in("q").cols() / nq) % 16 == 0;
    const uint32_t form = d.tune("attention.tiled.coopmat");
    if (!whole || form == 0 || !coopmat_unavailable(d, false).empty()) return "";
    if (form == 2 && d.tune("attention.flash_rows.cm_emulate") == 0) return "vulkan:flash_rows";
    return d.tune("attention.flash_coopmat.cm_emulate") == 0 ? "vulkan:flash_coopmat" : "";
  };
  // Query rows (tokens x GQA heads) per workgroup (fewer where shared memory is short); keys per K/V tile (a power
  // of two <= wg); keys one workgroup walks before the range is split; split keys while fewer workgroups than
  // min_groups would run, keeping at least split_min_keys keys per split; coopmat: prompt chunks on cooperative
  // matrices where the device has them, 2 vulkan:flash_rows (H100, 512 queries: 75.7 us against 108.1), 1
  // vulkan:flash_coopmat, 0 neither. Hopper: 16 keys per tile (H100, 512 queries without matrix units: 1012 us against
  // 1304 at 8, 1040 at 32; reports/nvidia-h100-80gb-hbm3/scalar-i8.md).
  v.tunables = {{"attention.tiled.rows", 32},        {"attention.tiled.keys", 8, {{"nvidia-hopper", 16}}},
                {"attention.tiled.max_keys", UINT32_MAX}, {"attention.tiled.min_groups", 256},
                {"attention.tiled.split_min_keys", 512}, {"attention.tiled.coopmat", 2}};
  r.add_variant(std::move(v));
}

}  // namespace hl::gpu
