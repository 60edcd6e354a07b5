// Device profiles and kernel tuning parameters (workgroup sizes, tile shapes, ...). A kernel asks
// profile.get("its_key") and passes the value as a specialization constant. The runtime knows no kernel: its own
// parameters ("wg_size", "device.*") have their defaults in device_profile.cpp, and every kernel's are declared
// by the code that reads them (declare_tunable: the ops declare theirs with their variants), each with the
// profiles that override it. HYBRIDLAB_TUNE and ScopedTuning set values above both.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace hl::vk {

struct DeviceInfo;

class DeviceProfile {
 public:
  // "lavapipe", "nvidia-hopper", "amd-rdna4" or "generic", seeded with that profile's defaults.
  static DeviceProfile for_device(const DeviceInfo& info);
  static DeviceProfile named(std::string_view name);  // Error for an unknown name

  const std::string& name() const { return name_; }
  // The value set on this profile, else the declared default (this profile's override of it, if any); a "*.wg"
  // or "*_wg" key with neither takes "wg_size"; Error for any other unknown key.
  uint32_t get(std::string_view key) const;
  uint32_t get(std::string_view key, uint32_t fallback) const;  // fallback instead of the Error
  void set(std::string_view key, uint32_t value);
  void erase(std::string_view key);  // back to the declared default (or the caller's fallback)
  // Applies "key=value,key=value" (decimal or 0x hex), as in env HYBRIDLAB_TUNE; Error when malformed.
  void apply_overrides(std::string_view spec);
  const std::map<std::string, uint32_t, std::less<>>& values() const { return values_; }  // set on this profile

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
const std::vector<std::string>& profile_names();  // lavapipe, nvidia-hopper, amd-rdna4, generic

// Declares a tuning parameter with its default and per-profile overrides (profile name -> value). Declaring a
// key again with other values is an Error (two readers disagreeing on a default); again with the same, a no-op.
void declare_tunable(const std::string& key, uint32_t value, const std::map<std::string, uint32_t>& per_profile = {});
// What declares the kernels' tunables (the op registry), run once before a key is first found missing, so a kernel
// called without the registry having been built still finds its defaults.
void set_tunable_source(void (*declare_all)());

}  // namespace hl::vk
