// The one place for per-device kernel tuning defaults (workgroup sizes, tile shapes, ...): a kernel
// asks profile.get("its_key", fallback) and passes the value as a specialization constant, so that
// tuning a new card means editing this file (or setting HYBRIDLAB_TUNE), never a kernel.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace hl::vk {

struct DeviceInfo;

class DeviceProfile {
 public:
  // "lavapipe", "nvidia-hopper", "amd-rdna4" or "generic", seeded with that profile's defaults.
  static DeviceProfile for_device(const DeviceInfo& info);
  static DeviceProfile named(std::string_view name);  // Error for an unknown name

  const std::string& name() const { return name_; }
  uint32_t get(std::string_view key) const;  // Error if the key has no default (see device_profile.cpp)
  uint32_t get(std::string_view key, uint32_t fallback) const;
  void set(std::string_view key, uint32_t value);
  void erase(std::string_view key);  // back to the kernel's own fallback
  // Applies "key=value,key=value" (decimal or 0x hex), as in env HYBRIDLAB_TUNE; Error when malformed.
  void apply_overrides(std::string_view spec);
  const std::map<std::string, uint32_t, std::less<>>& values() const { return values_; }

 private:
  std::string name_;
  std::map<std::string, uint32_t, std::less<>> values_;
};

// Sets tunables for a scope (a test, a sweep point) and restores the profile exactly as it was.
class ScopedTuning {
 public:
  ScopedTuning(DeviceProfile& p, const std::map<std::string, uint32_t>& values) : p_(p), saved_(p) {
    for (auto& [k, v] : values) p.set(k, v);
  }
  ~ScopedTuning() { p_ = saved_; }
  ScopedTuning(const ScopedTuning&) = delete;
  ScopedTuning& operator=(const ScopedTuning&) = delete;

 private:
  DeviceProfile& p_;
  DeviceProfile saved_;
};

// Which profile a device gets (see device_profile.cpp for the rules).
std::string profile_name_for(const DeviceInfo& info);

}  // namespace hl::vk
