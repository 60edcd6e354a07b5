// Device profiles: classification rules and the seeded tuning defaults.
#include "runtime/vulkan/device_profile.h"

#include "runtime/vulkan/device.h"

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

using Table = std::map<std::string, uint32_t, std::less<>>;

// The runtime's own parameters. A "*.wg" / "*_wg" workgroup size that nobody declares takes the profile's
// "wg_size". "subgroup_size_preferred": 0 = what the device reports.
const Table& common() {
  static const Table t = {
      {"wg_size", 128},
      {"subgroup_size_preferred", 0},
      // Dispatches recorded before the stream is submitted without waiting (0: only at a download or sync), so
      // the GPU starts on them while the host records the rest of the step, and the buffers of finished lists
      // return to the pool.
      {"device.stream.flush_dispatches", 64},
      // With nothing submitted still held (the GPU idle, as at a step's start after a sync), in a prefill step (the
      // plan executor's Device::set_idle_submit; decode keeps its window whole), the stream goes out after this many
      // dispatches instead (0: flush_dispatches alone), so the GPU does not wait for the first batch's recording.
      {"device.stream.flush_idle_dispatches", 8},
      // 1: a barrier only between dependent dispatches (runtime/device.h); 0: after every dispatch.
      {"device.stream.elide_barriers", 1},
      // 1: dispatches recorded level by level, independent ones side by side however they were issued
      // (runtime/device.h); 0: in issue order.
      {"device.stream.reorder", 1},
      // ... in prefill steps too (the plan executor sets it per step): on, the shared expert's and the projections'
      // short kernels beside the routing ones (H100, pp512 +1.7%: docs/bench.md).
      {"device.stream.reorder_prefill", 1},
      // 1: with reorder, each dispatch at the latest level its dependents allow instead of the earliest (the same
      // barriers; independent work beside the long levels rather than the first ones).
      {"device.stream.late", 0},
      // A pool miss of at least this many MiB drains the stream first, so that buffers only recorded work held
      // come back.
      {"device.pool.drain_mib", 256},
      // Weights are placed in blocks of this many MiB (Device::alloc_resident).
      {"device.arena.block_mib", 1024},
      // A replayed decode step submits its first segment at once (plan/replay.cpp): the GPU idles until then.
      {"decode.replay.early_flush", 1},
      // ... and its live ops write their outputs where its later segments read them (0: a copy after each).
      {"decode.replay.in_place", 1},
      // 1: greedy decode (hybridlab bench) feeds a replayed step the step before's argmax on the device and submits it
      // without waiting (the ids downloaded at the end); 0: the host downloads each id before the next step.
      {"decode.device_token", 1},
      // 1: the captured step's segments run as they are cut (Device::submit_now), while the host records the rest of
      // the step; 0: the step runs after its whole capture (the GPU idle while it is recorded). On the H200 tg128
      // 301.61 / 300.69 against 300.80 / 299.48 (reports/nvidia-h200/decode-instream.md, call W).
      {"decode.capture.submit_early", 1},
      // Decode prefetch (plan/prefetch.h): 1 reads the next ops' weights beside the op before them (lost on the
      // H200, so off); the bytes between two touched words.
      {"decode.prefetch", 0},
      {"decode.prefetch.stride", 32},
      // 1: volatile loads (plan/prefetch.comp, what lost); 0: plain loads into a sink (plan/prefetch_sink.comp).
      {"decode.prefetch.volatile", 1},
      // Where the plan leaves the Gated DeltaNet's output norm to its projection (rms_scaled_matmul): the column blocks per
      // value head over which gdn_decode writes its sums of squares, each block a workgroup of its own (1 where it does
      // not divide the head); 0 keeps the norm in gdn_decode's step (no rms_scaled_matmul). H100 (3424453, interleaved):
      // tg128 290.95 / 290.67 / 290.92 at 2 against 288.07 / 287.81 / 289.00 at 0, 289.33 at 4.
      {"decode.gdn_norm_parts", 2},
  };
  return t;
}

// Each profile's overrides of the runtime's parameters (kernels declare their own overrides).
const Table& overrides(std::string_view profile) {
  // lavapipe: subgroup 8, 32 KB shared memory, runs on CPU threads: small workgroups.
  static const Table lavapipe = {{"wg_size", 64}, {"device.arena.block_mib", 64}};
  // NVIDIA Hopper (H100/H200): warp 32, 48 KB static shared memory per workgroup through Vulkan.
  static const Table hopper = {{"wg_size", 256}};
  // AMD RDNA4 (Radeon AI PRO R9700, RX 9070/9060; gfx1200/gfx1201), from published limits: waves of 32 or 64
  // lanes (compute defaults to wave32 on RADV), 64 KB LDS per workgroup, WMMA 16x16x16 through
  // KHR_cooperative_matrix. Projections until measured on the card.
  static const Table rdna4 = {{"wg_size", 256}, {"subgroup_size_preferred", 32}};
  static const Table generic = {};
  if (profile == "lavapipe") return lavapipe;
  if (profile == "nvidia-hopper") return hopper;
  if (profile == "amd-rdna4") return rdna4;
  if (profile == "generic") return generic;
  throw Error(fmt::format("unknown device profile '{}' (known: lavapipe, nvidia-hopper, amd-rdna4, generic)", profile));
}

struct Declared {
  uint32_t value;
  std::map<std::string, uint32_t> per_profile;
};

std::map<std::string, Declared, std::less<>>& declared() {
  static std::map<std::string, Declared, std::less<>> d;
  return d;
}

void (*tunable_source)() = nullptr;

// The declared entry of key, after the tunable source has run once.
const Declared* find_declared(std::string_view key) {
  auto it = declared().find(key);
  if (it == declared().end() && tunable_source) {
    auto* source = tunable_source;
    tunable_source = nullptr;
    source();
    it = declared().find(key);
  }
  return it == declared().end() ? nullptr : &it->second;
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

const std::vector<std::string>& profile_names() {
  static const std::vector<std::string> n{"lavapipe", "nvidia-hopper", "amd-rdna4", "generic"};
  return n;
}

void declare_tunable(const std::string& key, uint32_t value, const std::map<std::string, uint32_t>& per_profile) {
  for (auto& [p, v] : per_profile) overrides(p);  // an unknown profile name is an Error
  auto [it, fresh] = declared().try_emplace(key, Declared{value, per_profile});
  if (!fresh && (it->second.value != value || it->second.per_profile != per_profile))
    throw Error(fmt::format("tuning parameter '{}' declared twice with different defaults", key));
}

void set_tunable_source(void (*declare_all)()) { tunable_source = declare_all; }

uint32_t DeviceProfile::get(std::string_view key) const {
  if (auto it = values_.find(key); it != values_.end()) return it->second;
  if (const Declared* d = find_declared(key)) {
    auto p = d->per_profile.find(name_);
    return p != d->per_profile.end() ? p->second : d->value;
  }
  const bool wg = key.size() > 3 && (key.ends_with(".wg") || key.ends_with("_wg"));
  if (wg) return get("wg_size");
  throw Error(fmt::format("tuning parameter '{}' has no default: declare it with the variant that reads it", key));
}

uint32_t DeviceProfile::get(std::string_view key, uint32_t fallback) const {
  if (values_.count(key) || find_declared(key)) return get(key);
  return fallback;
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
