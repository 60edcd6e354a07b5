// Vulkan variant attention = vulkan:flash_coopmat: vulkan:tiled's query tiles for prompt chunks with
// S = Q K^T and O += P V on cooperative matrices (attention_flash_cm.comp: 16x16x16 f16 x f16 + f32 per
// subgroup; Q, K, V and P rounded to f16, softmax and accumulation in f32), on devices with
// VK_KHR_cooperative_matrix (coopmat_unavailable). Decode (T == 1) is vulkan:decode_split's; head dims that are
// not multiples of 16 take vulkan:tiled. Tunables attention.flash_coopmat.*: rows (query rows per workgroup),
// keys (per K/V tile), subgroups (computing ones), margin (how far a row's max may rise before rescaling),
// f16_cache (1: the cache rows converted to f16 once per call, then read by the tiles at half the bytes), the
// key splits as vulkan:tiled's (max_keys, min_groups, split_min_keys, merge_wg), and cm_emulate = 1 (a test
// hook: attention_flash_cm_emul.comp, the same kernel with emulated matrices, which lavapipe runs).
#include "ops/attention/vulkan_common.h"

namespace hl::gpu {

namespace {

const char* const kTune = "attention.flash_coopmat.";

// Defaults sized for the H200's 48 KB of shared memory per workgroup (42.5 KB at D = 256, 46 KB with 8
// subgroups); tiles shrink where a device has less (lavapipe's 32 KB: 32 rows x 16 keys). min_groups 1024: the
// H200 holds ~5 such workgroups on each of its 132 SMs, and 512 queries x 16 heads make only 256 tiles of 32
// rows, so their keys are split (in >= split_min_keys pieces) rather than leave most of the device idle.
uint32_t tune(const Device& d, const char* p) { return d.tune(std::string(kTune) + p); }

bool emulated(const Device& d) { return tune(d, "cm_emulate") != 0; }

std::string unavailable(const Device& d) { return coopmat_unavailable(d, emulated(d)); }

// attention_flash_cm.glsl's tiles and their shared memory: Q rows and the K/V tile as f16 (rows padded by 8),
// S as f32 (padded by 4) or the subgroups' 16 x 16 scratch, P as f16 (padded by 8), 4 f32 per row, and the
// softmax's partial maxima and sums (2 f32 per invocation, or per row where rows outnumber invocations).
struct Shape {
  uint32_t rows, keys, nsg, nacc, wg;
};

uint64_t shared_bytes(uint64_t D, uint64_t rows, uint64_t keys, uint64_t nsg, uint64_t wg) {
  return 2 * (rows + keys) * (D + 8) + 4 * std::max(rows * (keys + 4), nsg * 256) + 2 * rows * (keys + 8) + 16 * rows +
         8 * std::max(rows, wg / rows * rows);
}

Shape shape(const Device& d, int64_t D) {
  Shape t{tune(d, "rows"), tune(d, "keys"), tune(d, "subgroups"), 0, 0};
  if (!t.rows || !t.keys || !t.nsg || t.rows % 16 || t.keys % 16)
    fail("attention: flash_coopmat tiles of {} rows x {} keys are not multiples of 16, or {} subgroups", t.rows,
         t.keys, t.nsg);
  t.wg = t.nsg * d.info().max_subgroup_size;
  // Fewer keys, then rows, per tile where shared memory is short.
  while (shared_bytes(D, t.rows, t.keys, t.nsg, t.wg) > d.info().max_shared_memory && (t.keys > 16 || t.rows > 16))
    (t.keys > 16 ? t.keys : t.rows) -= 16;
  if (const uint64_t b = shared_bytes(D, t.rows, t.keys, t.nsg, t.wg); b > d.info().max_shared_memory)
    fail("attention: flash_coopmat at head dim {} needs {} bytes of shared memory, the device has {}", D, b,
         d.info().max_shared_memory);
  t.nacc = u32(((t.rows / 16) * (D / 16) + t.nsg - 1) / t.nsg);
  if (t.wg > d.info().max_workgroup_invocations)
    fail("attention: flash_coopmat needs {} invocations per workgroup, this device allows {}", t.wg,
         d.info().max_workgroup_invocations);
  return t;
}

// Keys one workgroup of the emulated kernel may walk on lavapipe, which silently ends an invocation's loops
// after 65535 iterations in all: loop trips per key tile and of the rest, counted as if nothing were unrolled
// (an emulated product or store: 256 / subgroup size trips).
uint64_t loop_budget_keys(const Device& d, const Shape& t, uint64_t D) {
  const uint64_t e = 256 / d.info().min_subgroup_size, wg = t.nsg * d.info().min_subgroup_size;
  const uint64_t rows = (t.rows + wg - 1) / wg, tpr = std::max<uint64_t>(1, t.wg / t.rows);
  const uint64_t parts = (t.rows * tpr + wg - 1) / wg, cols = (t.keys + tpr - 1) / tpr;
  const uint64_t tile = 2 * 5 * ((t.keys * D / 4 + wg - 1) / wg) +                          // K, V staged
                        ((t.rows / 16) * (t.keys / 16) + t.nsg - 1) / t.nsg * (D / 16 + 2) * e +  // S
                        parts * (2 * cols + tpr + 2) + rows * (tpr + 1) +                     // softmax
                        t.nacc * (16 + 3 * e) + t.keys / 16 * t.nacc * e + 8;               // rescale, P V
  const uint64_t rest = 5 * ((t.rows * D / 4 + wg - 1) / wg) + rows + t.nacc * (3 * e + 2) + 64;
  return std::max<uint64_t>(1, (60000 - rest) / tile) * t.keys;
}

void flash_coopmat(VariantCtx& c, OpArgs& a) {
  const Tensor& q = a.in("q");
  Device& d = c.device();
  // The registry's availability check is not on every path that can run a variant (tests, plans): say why here.
  if (auto why = unavailable(d); !why.empty())
    fail("attention vulkan:flash_coopmat cannot run on {}: {}", d.info().name, why);
  const AttnShape s = attention_append_kv(d, a);
  const Shape t = shape(d, s.D);
  const bool emul = emulated(d);
  // A row's running max moves only when a tile's exceeds it by more than `margin` (natural log units), so
  // the accumulators are rescaled in few tiles; p <= e^margin must stay well inside f16 (65504 = e^11.1).
  const uint32_t margin = tune(d, "margin");
  if (margin > 10) fail("attention: flash_coopmat margin {} > 10 would overflow f16 probabilities", margin);
  // f16_cache: the cache rows this chunk reads rounded to f16 once (attention_kv_f16.comp), so that the query
  // tiles read half the bytes (each K/V row is read by every tile of its head).
  const bool f16 = tune(d, "f16_cache") != 0;
  const uint64_t L = uint64_t(s.kv_len) + s.T, W = uint64_t(s.n_kv) * s.D;
  Tensor kh, vh;
  if (f16) {
    kh = Tensor::device(d, int64_t(L), int64_t(W / 2));  // two halves per 32-bit element
    vh = Tensor::device(d, int64_t(L), int64_t(W / 2));
    struct {
      uint32_t n;
    } pc{u32(int64_t(L * W / 4))};
    const uint32_t wg = tune(d, "convert_wg");
    const Grid g = grid((uint64_t(pc.n) + wg - 1) / wg);
    d.dispatch(d.pipeline("attention_kv_f16", {{0, wg}}, 4, sizeof pc),
               {a.t.at("k_cache").buffer(d), a.t.at("v_cache").buffer(d), kh.buffer_mut(d), vh.buffer_mut(d)}, pc, g.x,
               g.y);
  }
  const TiledAttn k{emul ? "attention_flash_cm_emul" : "attention_flash_cm",
                    {{0, t.wg}, {1, u32(s.D)}, {2, t.rows}, {3, t.keys}, {4, t.nsg}, {5, t.nacc}, {6, margin},
                     {7, f16}, {8, tune(d, "early_v") != 0}},
                    t.rows,
                    t.keys,
                    emul && d.info().driver_id == VK_DRIVER_ID_MESA_LLVMPIPE ? loop_budget_keys(d, t, s.D) : 0,
                    d.info().subgroup_size_control && d.info().compute_full_subgroups,
                    [&](const char* p) { return tune(d, p); },
                    f16 ? &kh : nullptr,
                    f16 ? &vh : nullptr};
  a.set("o", attention_tiled_run(d, a, s, k));
}

}  // namespace

void register_attention_vulkan_flash_coopmat(Registry& r) {
  Variant v = vulkan_variant("attention", "vulkan:flash_coopmat",
                             "append k, v; query tiles sharing a KV head, S = Q K^T and O += P V on cooperative "
                             "matrices (f16 Q, K, V, P; f32 online softmax and accumulation); T = 1: decode_split",
                             flash_coopmat, false, false, unavailable);
  // f16 inputs: ~6e-4 relative L2 expected (derivation in ops/attention/test_tiled.cpp).
  v.cooperative_matrices = true;
  v.precision_tolerance = 2e-3;
  // Decode: flash-decoding; head dims that are not multiples of 16: the f32 tiles.
  v.delegate = [](VariantCtx&, const OpArgs& a) -> std::string {
    if (a.in("q").rows() <= 1) return "vulkan:decode_split";
    const int64_t nq = a.iparam("n_q_heads");
    return nq > 0 && a.in("q").cols() % nq == 0 && (a.in("q").cols() / nq) % 16 ? "vulkan:tiled" : "";
  };
  // 8 computing subgroups on Hopper: 512 queries over 4096 keys twice as fast as with 4.
  v.tunables = {{"attention.flash_coopmat.rows", 32},         {"attention.flash_coopmat.keys", 32},
                {"attention.flash_coopmat.subgroups", 4, {{"nvidia-hopper", 8}}},
                {"attention.flash_coopmat.margin", 8},        {"attention.flash_coopmat.f16_cache", 0},
                {"attention.flash_coopmat.max_keys", UINT32_MAX}, {"attention.flash_coopmat.min_groups", 1024},
                {"attention.flash_coopmat.split_min_keys", 512, {{"nvidia-hopper", 256}}}, {"attention.flash_coopmat.merge_wg", 128},
                {"attention.flash_coopmat.convert_wg", 256},  {"attention.flash_coopmat.cm_emulate", 0},
                {"attention.flash_coopmat.early_v", 1}};
  r.add_variant(std::move(v));
}

}  // namespace hl::gpu
