// Vulkan variant attention = vulkan:flash_rows: prompt chunks on cooperative matrices with each subgroup owning 16
// query rows whole (attention_flash_rows_cm.comp: Q in registers, S, softmax, P and O per subgroup, only the K/V tile
// shared; 16x16x16 f16 x f16 + f32), on devices with VK_KHR_cooperative_matrix. vulkan:tiled's launcher (row
// tiles x key splits, merged by attention_merge); decode (T == 1) is vulkan:decode_split's; head dims that are not
// multiples of 16 take vulkan:tiled. Tunables attention.flash_rows.*: subgroups (16 query rows each), keys (per K/V
// tile), prefetch (the next tile's loads in flight during this one's products), s_chains (2: S's sums over D in two
// independent chains), margin (as flash_coopmat's), the key splits (max_keys, min_groups, split_min_keys, merge_wg)
// and cm_emulate = 1 (a test hook: attention_flash_rows_cm_emul.comp, the same kernel on emulated matrices, which
// lavapipe runs).
#include "ops/attention/vulkan_common.h"

namespace hl::gpu {

namespace {

const char* const kTune = "attention.flash_rows.";

uint32_t tune(const Device& d, const char* p) { return d.tune(std::string(kTune) + p); }

bool emulated(const Device& d) { return tune(d, "cm_emulate") != 0; }

std::string unavailable(const Device& d) { return coopmat_unavailable(d, emulated(d)); }

struct Shape {
  uint32_t nsg, keys, wg;
};

// attention_flash_rows_cm.glsl's shared memory: the K and V tiles as f16 (rows padded by 8), each subgroup's S as f32
// (padded by 4) and P as f16 (padded by 8), 3 f32 per query row.
uint64_t shared_bytes(uint64_t D, uint64_t nsg, uint64_t keys) {
  return 4 * keys * (D + 8) + nsg * 16 * (4 * (keys + 4) + 2 * (keys + 8) + 12);
}

Shape shape(const Device& d, int64_t D) {
  Shape t{tune(d, "subgroups"), tune(d, "keys"), 0};
  if (!t.nsg || !t.keys || t.keys % 16)
    fail("attention: flash_rows needs keys per tile a multiple of 16 (not {}) and subgroups > 0 (not {})", t.keys,
         t.nsg);
  // Fewer keys, then subgroups, per tile where shared memory is short.
  while (shared_bytes(D, t.nsg, t.keys) > d.info().max_shared_memory && (t.keys > 16 || t.nsg > 1))
    t.keys > 16 ? t.keys -= 16 : --t.nsg;
  if (const uint64_t b = shared_bytes(D, t.nsg, t.keys); b > d.info().max_shared_memory)
    fail("attention: flash_rows at head dim {} needs {} bytes of shared memory, the device has {}", D, b,
         d.info().max_shared_memory);
  t.wg = t.nsg * d.info().max_subgroup_size;
  if (t.wg > d.info().max_workgroup_invocations)
    fail("attention: flash_rows needs {} invocations per workgroup, this device allows {}", t.wg,
         d.info().max_workgroup_invocations);
  return t;
}

// Keys one workgroup of the emulated kernel may walk on lavapipe, which silently ends an invocation's loops after
// 65535 iterations in all: loop trips per key tile and of the rest, counted as if nothing were unrolled (an
// emulated product or store: 256 / subgroup size trips).
uint64_t loop_budget_keys(const Device& d, const Shape& t, uint64_t D) {
  const uint64_t sg = d.info().min_subgroup_size, e = 256 / sg, wg = t.nsg * sg, db = D / 16, kb = t.keys / 16;
  const uint64_t lpr = std::max<uint64_t>(1, sg / 16), passes = (16 * lpr + sg - 1) / sg;
  const uint64_t tile = 2 * 5 * ((t.keys * D / 4 + wg - 1) / wg) +     // K, V staged
                        kb * (db * (e + 1) + e) +                         // S
                        passes * (2 * t.keys / lpr + 2 * lpr + 4) +      // softmax
                        db * (3 * e + 3) + kb * (db * (e + 1) + 1) + 8;  // rescale, P V
  const uint64_t append = ((16 * t.nsg + 1) * (D / 4) + wg - 1) / wg;  // tokens x vec4s, G = 1 at most
  const uint64_t rest = append + 2 * ((16 * t.nsg + wg - 1) / wg) + db * (2 * e + 2) + 64;
  return std::max<uint64_t>(1, (60000 - rest) / tile) * t.keys;
}

void flash_rows(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  if (auto why = unavailable(d); !why.empty())
    fail("attention vulkan:flash_rows cannot run on {}: {}", d.info().name, why);
  const AttnShape s = attention_shape(a);  // the kernel appends k, v itself
  const Shape t = shape(d, s.D);
  const bool emul = emulated(d);
  const uint32_t margin = tune(d, "margin");
  if (margin > 10) fail("attention: flash_rows margin {} > 10 would overflow f16 probabilities", margin);
  TiledAttn k{emul ? "attention_flash_rows_cm_emul" : "attention_flash_rows_cm",
                    {{0, t.wg}, {1, u32(s.D)}, {2, t.keys}, {3, t.nsg}, {4, margin}, {5, tune(d, "prefetch") != 0},
                     {6, tune(d, "s_chains") == 2 ? 2u : 1u}},
                    16 * t.nsg,
                    t.keys,
                    emul && d.info().driver_id == VK_DRIVER_ID_MESA_LLVMPIPE ? loop_budget_keys(d, t, s.D) : 0,
                    d.info().subgroup_size_control && d.info().compute_full_subgroups,
                    [&](const char* p) { return tune(d, p); }};
  k.appends = true;
  a.set("o", attention_tiled_run(d, a, s, k));
}

}  // namespace

void register_attention_vulkan_flash_rows(Registry& r) {
  Variant v = vulkan_variant("attention", "vulkan:flash_rows",
                             "append k, v; 16 query rows per subgroup, whole (Q in registers, S, softmax, P, O its "
                             "own), only the K/V tile shared; cooperative matrices (f16 Q, K, V, P; f32 softmax and "
                             "accumulation); T = 1: decode_split",
                             flash_rows, false, false, unavailable);
  // The same roundings as flash_coopmat: ~6e-4 relative L2 expected (ops/attention/test_tiled.cpp).
  v.cooperative_matrices = true;
  v.precision_tolerance = 2e-3;
  v.delegate = [](VariantCtx&, const OpArgs& a) -> std::string {
    if (a.in("q").rows() <= 1) return "vulkan:decode_split";
    const int64_t nq = a.iparam("n_q_heads");
    return nq > 0 && a.in("q").cols() % nq == 0 && (a.in("q").cols() / nq) % 16 ? "vulkan:tiled" : "";
  };
  // 8 subgroups (128 query rows per workgroup); at head dim 256 on 48 KB of shared memory (NVIDIA), 16 keys per tile.
  v.tunables = {{"attention.flash_rows.subgroups", 8},         {"attention.flash_rows.keys", 32},
                {"attention.flash_rows.prefetch", 0},          {"attention.flash_rows.margin", 8},
                {"attention.flash_rows.max_keys", UINT32_MAX}, {"attention.flash_rows.min_groups", 256},
                {"attention.flash_rows.split_min_keys", 160},  {"attention.flash_rows.merge_wg", 128},
                {"attention.flash_rows.s_chains", 1},          {"attention.flash_rows.cm_emulate", 0}};
  r.add_variant(std::move(v));
}

}  // namespace hl::gpu
