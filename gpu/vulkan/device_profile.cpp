// Device profiles: classification rules and the seeded tuning defaults.
#include "gpu/vulkan/device_profile.h"

#include "gpu/vulkan/device.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace hl::vk {
namespace {

bool contains_nocase(std::string_view hay, std::string_view needle) {
  auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
  return it != hay.end();
}

bool contains_any(std::string_view hay, std::initializer_list<std::string_view> needles) {
  return std::any_of(needles.begin(), needles.end(), [&](auto n) { return contains_nocase(hay, n); });
}

// Every kernel tunable has its default here, "<op>.<variant>.<parameter>", so tuning a new card means
// editing this file (or HYBRIDLAB_TUNE), never a kernel. `common` holds the defaults every profile starts
// from; each profile then overrides what its hardware wants. A "*.wg" / "*_wg" workgroup size that no
// table names takes the profile's "wg_size". "subgroup_size_preferred": 0 = what the device reports.
using Table = std::map<std::string, uint32_t, std::less<>>;

const Table& common() {
  static const Table t = {
      {"wg_size", 128},
      {"subgroup_size_preferred", 0},
      // Dispatches recorded before the stream is submitted without waiting (0: only at a download or sync), so
      // the GPU starts on them while the host records the rest of the step, and the buffers of finished lists
      // return to the pool. The full-size model on the H200 (reports/nvidia-h200/end_to_end.md): tg128 72 -> 110
      // tok/s with 64; pp512 1075 -> 1251 tok/s (with the dequantized MoE path, which needs the recycling).
      // A 2-layer model's pp512 was slower with it (68 vs 22 ms, one noisy run): not understood yet.
      {"device.stream.flush_dispatches", 64},
      // 1: a barrier only between dependent dispatches (gpu/device.h); 0: after every dispatch. On the H200 a
      // barrier costs about 2.2 us (512 chained adds: 2.44 us per dispatch with one each, 0.24 us without).
      {"device.stream.elide_barriers", 1},
      // 1: dispatches recorded level by level, independent ones side by side however they were issued
      // (gpu/device.h); 0: in issue order. H200, full-size model (end_to_end.md): tg128 140 -> 156 tok/s with it
      // and batched segment submissions (b2f8017 -> 03264b1).
      {"device.stream.reorder", 1},
      // ... in prefill steps too (the plan executor sets it per step): 0, as prefill ran 3.5% slower with it
      // (8-layer model, pp512 6200 vs 6420 tok/s, the same machine; decode tg64 561 vs 527).
      {"device.stream.reorder_prefill", 0},
      // A pool miss of at least this many MiB drains the stream first, so that buffers only recorded work held
      // come back (without it, 40 layers of a prefill chunk's dequantized expert stacks exhausted the H200).
      {"device.pool.drain_mib", 256},
      // Weights are placed in blocks of this many MiB (Device::alloc_resident): the full-size model's 733 tensors
      // in about 22 allocations instead of one each.
      {"device.arena.block_mib", 1024},
      {"add.elementwise.wg", 256},
      {"slice.copy.wg", 256},
      {"rope.neox.wg", 256},
      {"matmul.tiled.tile", 16},         // TILE x TILE outputs per workgroup, TILE-wide K slices in shared memory
      {"matmul.rowdot.cols", 8},         // tokens per pass over a weight row
      {"matmul.auto.rowdot_tokens", 8},  // auto: rowdot up to this many tokens, tiled above
      {"attention.append.wg", 256},
      {"attention.flash.block", 16},          // keys per online-softmax block
      {"attention.flash.max_keys", UINT32_MAX},  // keys one workgroup walks before the range is split
      {"attention.decode_split.block", 32},
      {"attention.decode_split.splits", 64},  // KV slices per head at decode (merged afterwards)
      {"ssm_conv.channel.tokens", 16},        // tokens per invocation's sliding window
      {"l2norm.rowgroup.group", 32},          // invocations per head
      {"gated_rmsnorm.rowgroup.group", 32},
      {"gdn_prep.fused.wg", 128},             // invocations per (head, token block), capped at the head width
      {"gdn_prep.fused.tokens", 16},          // tokens per workgroup (at least K-1)
      {"gdn_prep.fused.group", 16},           // invocations per token's sum of squares
      {"ssm_scan.block_resident.cols", 32},   // value columns per workgroup
      {"ssm_scan.block_resident.split", 8},   // invocations sharing a column (the d_k dot products)
      {"ssm_scan.block_resident.stage", 16},  // tokens staged in shared memory at a time
      {"ssm_scan.per_token.cols", 32},
      {"ssm_scan.per_token.split", 8},
      {"moe_experts.per_token.rows", 8},      // weight rows per subgroup pass
      {"shared_expert.fused.rows", 8},
      {"shared_expert.fused.gemm_tokens", 2},  // this many tokens or more: route_pack's grouped GEMM (one expert)
      // -- quantized matmul and experts (gpu/ops/vk_quant.cpp)
      {"matmul.auto.qmatvec_tokens", 1},  // auto on quantized weights: a mat-vec up to this many tokens, qcols above
      // decode: add_rmsnorm folded into the projections that read it (PlanExecutor::add_rmsnorm). Off: on the H200's
      // full-size model it cost more than the dependent dispatch it saves (tg64 145.5 vs 153.9 tok/s at 95d79ce; capping
      // qmatvec_direct's grid at 264..1056 workgroups did not help): every workgroup of every folded projection
      // re-reads the 2-3 rows and reduces them before its first weight load.
      {"add_rmsnorm.fold", 0},
      // q6_K decode weights of at least this many rows: qmatvec_planar (0: never). H200: the lm_head (248320 rows)
      // 180 us vs qmatvec_direct 226; 2048 -> 8192 20.0 vs 17.3 us (reports/nvidia-h200/matmul-quant-decode-q6-*).
      {"matmul.auto.decode_planar_rows", 65536},
      {"matmul.auto.decode_direct", 1},   // that mat-vec: 1 qmatvec_direct (where x fits shared memory), 0 qmatvec
      {"matmul.qmatvec.wg", 128},
      {"matmul.qmatvec.rows", 16},        // rows staged per workgroup (fewer where shared memory is short)
      {"matmul.qmatvec.pass", 2},         // rows a subgroup decodes per load of x
      // qmatvec_direct swept on the H200 (rows 1..8 x units 1..4 x wg 128/256 x groups; matmul-quant-decode-direct.md):
      // q4_K 2048->8192 18.1 us at 2 x 1 (qmatvec 20.2), the q6_K lm_head 226 us at 8 x 2 (qmatvec 304); 4 units slower.
      {"matmul.qmatvec_direct.wg", 256},
      {"matmul.qmatvec_direct.rows", 2},    // rows per subgroup pass (their loads in flight together)
      {"matmul.qmatvec_direct.units", 1},   // 32-value units per lane per step
      {"matmul.qmatvec_direct.groups", 0},  // workgroups at most (0: a pass per subgroup), walking rows grid-stride
      {"matmul.qmatvec_planar.wg", 256},    // q6_K planar rows (qmatvec_planar.glsl)
      {"matmul.qmatvec_planar.rows", 2},    // row groups per subgroup pass (their loads in flight together)
      {"matmul.qmatvec_planar.groups", 0},  // workgroups at most (0: a pass per subgroup), walking rows grid-stride
      {"matmul.qmatvec_planar_i8.wg", 256},
      {"matmul.qmatvec_planar_i8.rows", 2},
      {"matmul.qmatvec_planar_i8.groups", 0},
      {"matmul.qmatvec_i8.wg", 128},
      {"matmul.qmatvec_i8.cols", 4},      // tokens each decoded slot of weights serves
      {"matmul.qmatvec_i8.slots", 1},     // slots (64 values) a lane decodes per step
      {"matmul.qmatvec_i8_staged.rows", 8},     // rows per tile (one contiguous span of bytes)
      {"matmul.qmatvec_i8_staged.groups", 1024},  // workgroups at most; each walks tiles grid-stride
      {"matmul.qmatvec_i8_staged.slots", 1},      // 64-value slots per lane (fewer lanes per row, rows in parallel)
      {"matmul.qmatvec_i8_staged.depth", 1},      // tiles each worker has in flight (1..3)
      {"matmul.qmatvec_i8_staged.local", 0},      // 1: each subgroup a worker (its own tiles, subgroup barriers)
      {"matmul.qcols.rows", 32},          // weight rows per workgroup
      {"matmul.qcols.max_cols", 32},      // tokens per workgroup: each dequantized weight tile serves them all
      {"matmul.qcols.tm", 2},             // rows per invocation (register tile TM x max_cols / columns of invocations)
      {"matmul.qcols.units", 2},          // 32-value units per shared-memory step
      {"lm_head.qmatvec.wg", 128},
      {"lm_head.qmatvec.rows", 16},
      {"lm_head.qmatvec.pass", 2},
      {"lm_head.qmatvec_direct.wg", 256},
      {"lm_head.qmatvec_direct.rows", 8},
      {"lm_head.qmatvec_direct.units", 2},
      {"lm_head.qmatvec_direct.groups", 0},
      {"lm_head.qmatvec_planar.wg", 256},
      {"lm_head.qmatvec_planar.rows", 2},
      {"lm_head.qmatvec_planar.groups", 0},
      {"lm_head.qmatvec_planar_i8.wg", 256},
      {"lm_head.qmatvec_planar_i8.rows", 2},
      {"lm_head.qmatvec_planar_i8.groups", 0},
      {"lm_head.qmatvec_i8.wg", 128},
      {"lm_head.qmatvec_i8.cols", 4},
      {"lm_head.qmatvec_i8.slots", 1},
      {"lm_head.qmatvec_i8_staged.rows", 8},
      {"lm_head.qmatvec_i8_staged.groups", 1024},
      {"lm_head.qmatvec_i8_staged.slots", 1},
      {"lm_head.qmatvec_i8_staged.depth", 1},
      {"lm_head.qmatvec_i8_staged.local", 0},
      {"lm_head.qcols.rows", 32},
      {"lm_head.qcols.max_cols", 32},
      {"lm_head.qcols.tm", 2},
      {"lm_head.qcols.units", 2},
      // -- chunked ssm_scan (gpu/ops/vk_ssm_chunked.cpp)
      {"ssm_scan.chunked.chunk", 64},       // C: tokens per chunk (16, 32, 64 or 128)
      {"ssm_scan.chunked.tile", 64},        // output tile (BM = BN, capped at C) of the per-chunk products
      {"ssm_scan.chunked.micro", 4},        // outputs per invocation along each side of a tile
      {"ssm_scan.chunked.cols", 32},        // value columns per workgroup of the state pass
      {"ssm_scan.chunked.segment", 2048},   // tokens per pass (scratch grows with it); .wg: state pass, solve
      {"ssm_scan.chunked.min_tokens", 2},   // fewer tokens (decode): vulkan:block_resident
      // -- route-packed moe_experts (gpu/ops/vk_route_pack.cpp)
      {"moe_experts.route_pack.min_tokens", 2},   // fewer tokens (decode): the per-token kernels
      {"moe_experts.route_pack.block", 256},      // entries binned per workgroup (a multiple of 32)
      {"moe_experts.route_pack.rows", 16},        // grouped GEMM: packed rows per tile (also the tile list's unit)
      {"moe_experts.route_pack.cols", 64},        // output columns per tile
      {"moe_experts.route_pack.depth", 16},       // reduction depth per shared-memory slice
      {"moe_experts.route_pack.thread_rows", 2},  // outputs per invocation: thread_rows x thread_cols,
      {"moe_experts.route_pack.thread_cols", 4},  //   so (rows / thread_rows) * (cols / thread_cols) invocations
      {"moe_experts.route_pack.q_thread_rows", 2},  // quantized weights decoded in the tiles: rows per invocation,
      {"moe_experts.route_pack.q_cols", 32},       // (slices of 128 values): columns per tile
      {"moe_experts.route_pack.q_thread_cols", 2},  //   (halved where shared memory is short) and per invocation
      // Chunks of this many tokens or more dequantize quantized experts to f32 on the device first and run the f32
      // GEMM (0: never); kept only where the f32 stack fits one storage-buffer binding.
      {"moe_experts.route_pack.dequant_tokens", 64},
      {"moe_experts.route_pack.dequant_wg", 256},
      // -- tiled attention (gpu/ops/vk_attention_tiled.cpp)
      {"attention.tiled.rows", 32},                // query rows (tokens x GQA heads) per workgroup; fewer if shared memory is short
      {"attention.tiled.keys", 8},                 // keys per shared-memory K/V tile (a power of two <= wg)
      {"attention.tiled.max_keys", UINT32_MAX},    // keys one workgroup walks before the range is split
      {"attention.tiled.min_groups", 256},         // split keys while fewer workgroups than this would run ...
      {"attention.tiled.split_min_keys", 512},     // ... but keep at least this many keys per split
  };
  return t;
}

const Table& overrides(std::string_view profile) {
  // lavapipe: subgroup 8, 32 KB shared memory, runs on CPU threads: small workgroups.
  static const Table lavapipe = {{"wg_size", 64}, {"device.arena.block_mib", 64}};
  // NVIDIA Hopper (H100/H200): warp 32, 48 KB static shared memory per workgroup through Vulkan
  // (more needs opt-in), KHR_cooperative_matrix with 16x16x16 f16/bf16 shapes. The ssm_scan values
  // were swept on the H200 (32 columns x 8-way split x 16 staged tokens was best or near best at every T).
  // qmatvec: 2 rows staged per workgroup, swept on the H200 (rows 2..16 x wg 64..256 x pass 1..4): the
  // Q6_K lm_head 691 -> 305 us (more workgroups resident, more loads in flight); Q4_K 2048->8192 24 -> 20 us.
  // qmatvec_i8: 2 slots per lane per step, swept 1/2/4 on the H200: the lm_head 232 -> 217 us.
  // qmatvec_i8_staged on the Q6_K lm_head, swept (rows 1..24, groups 132..4224, wg 128..512, slots 1..4, depth
  // 1..3, local): each subgroup its own worker on one-row tiles (local 1, rows 1), wg 256, 1024 groups, depth 1:
  // 145 us (64.5% of the read ceiling); workgroup tiles of 4 rows at wg 128 150 us; deeper prefetch was slower.
  // qmatvec_planar(_i8) on the Q6_K lm_head, swept (rows 1/2/4 x wg 128/256 x groups 0..8448): one row group per
  // pass, wg 128, a capped grid: f32 x 180 us (51.9%) at 2112 groups; i8 x 110.9 us (84.3% of the read ceiling)
  // at 4224, 109.8 us (85.1%) at 8448 in the same run but 111.7 at 4224 in the one before
  // (reports/nvidia-h200/matmul-quant-decode-q6-qmatvec-planar*.md).
  // attention flash_coopmat, 512 queries over 4096 keys, swept (rows, keys, subgroups, min_groups, f16_cache):
  // 8 computing subgroups 1213 us vs 4 1980 us at the best other settings (the defaults).
  // qcols: 16 columns per weight tile was the best max_cols (1..64) for 14 of the 15 prompt cases (n = 40..512)
  // of reports/nvidia-h200/matmul-quantized.md, 32 (the default) none: e.g. q4_K 2048->8192 n=512 2431 vs 2678 us.
  // qcols tiles swept on the H200 (wg x rows x tm x units x max_cols; q4_K 2048->8192 n=512): 256 x 128 x 8 x 1 x 64
  // 933 us (18.4 TFLOP/s) vs 2429 us at the old best (128 x 32 x 2 x 2 x 16). route_pack on q4_K experts (T=512):
  // q_thread_rows 1 (256 invocations of 1 x 2 outputs) 7.37 ms vs 9.44 ms at 2; wider tiles were slower.
  static const Table hopper = {{"wg_size", 256},
                               {"matmul.qcols.rows", 128},
                               {"matmul.qcols.tm", 8},
                               {"matmul.qcols.units", 1},
                               {"moe_experts.route_pack.q_thread_rows", 1},
                               {"matmul.qmatvec.rows", 2},
                               {"lm_head.qmatvec.rows", 2},
                               {"lm_head.qmatvec_i8.slots", 2},
                               {"matmul.qmatvec_i8_staged.local", 1},
                               {"matmul.qmatvec_i8_staged.rows", 1},
                               {"lm_head.qmatvec_i8_staged.local", 1},
                               {"lm_head.qmatvec_i8_staged.rows", 1},
                               {"lm_head.qmatvec_planar.rows", 1},
                               {"lm_head.qmatvec_planar.wg", 128},
                               {"lm_head.qmatvec_planar.groups", 2112},
                               {"lm_head.qmatvec_planar_i8.rows", 1},
                               {"lm_head.qmatvec_planar_i8.wg", 128},
                               {"lm_head.qmatvec_planar_i8.groups", 4224},
                               {"matmul.qcols.max_cols", 64},
                               {"lm_head.qcols.max_cols", 16},
                               {"attention.flash_coopmat.subgroups", 8}};
  // AMD RDNA4 (Radeon AI PRO R9700, RX 9070/9060; gfx1200/gfx1201), from published limits: waves of
  // 32 or 64 lanes (subgroup size control 32..64; compute defaults to wave32 on RADV), 64 KB LDS per
  // workgroup, WMMA 16x16x16 (f16/bf16 -> f32, 8-bit -> i32) exposed as KHR_cooperative_matrix.
  // Values are projections until measured on the card.
  static const Table rdna4 = {{"wg_size", 256}, {"subgroup_size_preferred", 32}, {"attention.flash.block", 32}};
  static const Table generic = {};
  if (profile == "lavapipe") return lavapipe;
  if (profile == "nvidia-hopper") return hopper;
  if (profile == "amd-rdna4") return rdna4;
  if (profile == "generic") return generic;
  throw Error(fmt::format("unknown device profile '{}' (known: lavapipe, nvidia-hopper, amd-rdna4, generic)", profile));
}

}  // namespace

std::string profile_name_for(const DeviceInfo& info) {
  if (info.vendor_id == 0x10DE && contains_any(info.name, {"H100", "H200", "H800", "GH200"})) return "nvidia-hopper";
  if (info.vendor_id == 0x1002 && contains_any(info.name, {"R9700", "RX 9070", "RX 9060", "gfx1200", "gfx1201"}))
    return "amd-rdna4";
  if (info.driver_id == VK_DRIVER_ID_MESA_LLVMPIPE || contains_any(info.driver_name, {"llvmpipe", "lavapipe"}))
    return "lavapipe";
  return "generic";
}

DeviceProfile DeviceProfile::named(std::string_view name) {
  DeviceProfile p;
  p.values_ = common();
  for (auto& [k, v] : overrides(name)) p.values_.insert_or_assign(k, v);
  p.name_ = name;
  return p;
}

DeviceProfile DeviceProfile::for_device(const DeviceInfo& info) { return named(profile_name_for(info)); }

uint32_t DeviceProfile::get(std::string_view key) const {
  if (auto it = values_.find(key); it != values_.end()) return it->second;
  const bool wg = key.size() > 3 && (key.ends_with(".wg") || key.ends_with("_wg"));
  if (wg) return get("wg_size");
  throw Error(fmt::format("tuning parameter '{}' has no default: add it to gpu/vulkan/device_profile.cpp", key));
}

uint32_t DeviceProfile::get(std::string_view key, uint32_t fallback) const {
  auto it = values_.find(key);
  return it == values_.end() ? fallback : it->second;
}

void DeviceProfile::erase(std::string_view key) {
  if (auto it = values_.find(key); it != values_.end()) values_.erase(it);
}

void DeviceProfile::set(std::string_view key, uint32_t value) { values_.insert_or_assign(std::string(key), value); }

void DeviceProfile::apply_overrides(std::string_view spec) {
  while (!spec.empty()) {
    auto comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view{} : spec.substr(comma + 1);
    if (item.empty()) continue;
    auto eq = item.find('=');
    std::string_view key = item.substr(0, eq), text = eq == std::string_view::npos ? "" : item.substr(eq + 1);
    int base = 10;
    if (text.starts_with("0x") || text.starts_with("0X")) text.remove_prefix(2), base = 16;
    uint32_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
    if (key.empty() || text.empty() || ec != std::errc() || end != text.data() + text.size())
      throw Error(fmt::format("bad tuning override '{}': expected key=value with an unsigned 32-bit value", item));
    set(key, value);
  }
}

}  // namespace hl::vk
