// One Vulkan device ready for compute: instance (with validation when asked), the chosen physical
// device, a logical device with the features kernels may use, one compute queue, the pipeline cache,
// the device profile, and the staging buffer that upload/download helpers share.
#pragma once

#include "runtime/vulkan/device.h"
#include "runtime/vulkan/device_profile.h"
#include "runtime/vulkan/loader.h"

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace hl::vk {

class Buffer;
class CommandList;

struct ContextOptions {
  // "" -> env HYBRIDLAB_DEVICE -> first discrete GPU, else integrated, else anything (lavapipe).
  // A number is an index in enumeration order; anything else a case-insensitive name substring.
  std::string device;
  std::optional<bool> validation;    // unset -> env HYBRIDLAB_VALIDATION=1
  std::string pipeline_cache_path;   // "" -> env HYBRIDLAB_PIPELINE_CACHE ("" again: in memory only)
  std::string tune;                  // "key=value,..." applied to the profile after env HYBRIDLAB_TUNE
  bool use_push_descriptors = true;  // false forces descriptor pools even where push descriptors exist
  // Each pipeline's compiler statistics (registers, shared memory, ...) on stderr as it is created, where the
  // device has VK_KHR_pipeline_executable_properties; unset -> env HYBRIDLAB_PIPELINE_STATS=1.
  std::optional<bool> pipeline_stats;
  // false: VK_KHR_cooperative_matrix left off even where the device has it; unset -> off where env HYBRIDLAB_COOPMAT=0.
  std::optional<bool> cooperative_matrices;
};

// Every device the loader sees, in enumeration order (for `hybridlab devices`).
std::vector<DeviceInfo> list_devices();

class Context {
 public:
  static std::unique_ptr<Context> create(const ContextOptions& options = {});
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const DeviceInfo& info() const { return info_; }
  std::string device_slug() const { return vk::device_slug(info_.name); }
  DeviceProfile& profile() { return profile_; }
  const DeviceProfile& profile() const { return profile_; }

  const Functions& fn() const { return fn_; }
  VkInstance instance() const { return instance_; }
  VkPhysicalDevice physical_device() const { return physical_device_; }
  VkDevice device() const { return device_; }
  VkQueue queue() const { return queue_; }
  const VkPhysicalDeviceMemoryProperties& memory_properties() const { return memory_; }
  VkPipelineCache pipeline_cache() const { return pipeline_cache_; }
  bool push_descriptors() const { return push_descriptors_; }
  bool pipeline_stats() const { return pipeline_stats_; }

  void save_pipeline_cache() const;  // to the cache path, if any (also done on destruction)
  void wait_idle() const;
  // Work to run when the context goes, before its device does (another runtime's objects on this device: Halide's),
  // the last registered first.
  void on_teardown(std::function<void()> f) { teardown_.push_back(std::move(f)); }

  // Validation (warnings and errors): the total count and the text of the first few.
  bool validation_enabled() const { return validation_ != nullptr; }
  size_t validation_message_count() const;
  std::vector<std::string> validation_messages() const;
  void clear_validation_messages();

  // Shared by the blocking Buffer helpers; not thread-safe, like the rest of a Context.
  Buffer& staging(VkDeviceSize bytes);
  CommandList& transfer_commands();

  struct ValidationLog;  // filled by the debug messenger callback

 private:
  Context() = default;

  Functions fn_;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  std::unique_ptr<ValidationLog> validation_;
  VkPhysicalDevice physical_device_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  DeviceInfo info_;
  DeviceProfile profile_;
  VkPhysicalDeviceMemoryProperties memory_{};
  VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;
  std::string pipeline_cache_path_;
  bool push_descriptors_ = false;
  bool pipeline_stats_ = false;
  std::unique_ptr<Buffer> staging_;
  std::unique_ptr<CommandList> transfer_;
  std::vector<std::function<void()>> teardown_;
};

}  // namespace hl::vk
