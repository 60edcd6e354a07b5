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

// Kernels add their keys to these tables (name them "<kernel>.<parameter>", e.g. "ssm_scan.chunk").
// "wg_size": default workgroup size; "subgroup_size_preferred": 0 = use what the device reports,
// else a size for pipelines to require when the device supports subgroup size control.
const std::map<std::string, uint32_t, std::less<>>& defaults(std::string_view profile) {
  // lavapipe: subgroup 8, 32 KB shared memory, runs on CPU threads: small workgroups.
  static const std::map<std::string, uint32_t, std::less<>> lavapipe = {
      {"wg_size", 64},
      {"subgroup_size_preferred", 0},
  };
  // NVIDIA Hopper (H100/H200): warp 32, 48 KB static shared memory per workgroup through Vulkan
  // (more needs opt-in), KHR_cooperative_matrix with 16x16x16 f16/bf16 shapes.
  static const std::map<std::string, uint32_t, std::less<>> hopper = {
      {"wg_size", 256},
      {"subgroup_size_preferred", 0},
  };
  // AMD RDNA4 (Radeon AI PRO R9700, RX 9070/9060; gfx1200/gfx1201), from published limits: waves of
  // 32 or 64 lanes (subgroup size control 32..64; compute defaults to wave32 on RADV), 64 KB LDS per
  // workgroup, WMMA 16x16x16 (f16/bf16 -> f32, 8-bit -> i32) exposed as KHR_cooperative_matrix.
  // Values are projections until measured on the card.
  static const std::map<std::string, uint32_t, std::less<>> rdna4 = {
      {"wg_size", 256},
      {"subgroup_size_preferred", 32},
  };
  static const std::map<std::string, uint32_t, std::less<>> generic = {
      {"wg_size", 128},
      {"subgroup_size_preferred", 0},
  };
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
  p.values_ = defaults(name);
  p.name_ = name;
  return p;
}

DeviceProfile DeviceProfile::for_device(const DeviceInfo& info) { return named(profile_name_for(info)); }

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
