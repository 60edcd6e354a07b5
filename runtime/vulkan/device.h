// What a physical device offers, gathered once: kernels read the limits and features that decide
// their variants (subgroup size, shared memory, cooperative matrix) here and nowhere else.
#pragma once

#include "runtime/vulkan/loader.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace hl::vk {

// One supported VK_KHR_cooperative_matrix shape: D(MxN, result) = A(MxK) * B(KxN) + C(MxN).
struct CoopMatrixConfig {
  uint32_t m = 0, n = 0, k = 0;
  uint32_t a_type = 0, b_type = 0, c_type = 0, result_type = 0;  // VkComponentTypeKHR values
  bool saturating = false;
  uint32_t scope = 0;       // VkScopeKHR, 3 = subgroup
  std::string str() const;  // "16x16x16 f16*f16+f32->f32 subgroup"
};

struct DeviceInfo {
  uint32_t index = 0;  // in vkEnumeratePhysicalDevices order
  std::string name;
  uint32_t vendor_id = 0, device_id = 0;
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  VkDriverId driver_id = VkDriverId(0);
  std::string driver_name, driver_info;
  uint32_t api_version = 0;
  // The same device seen through two loader entries (an ICD manifest installed twice) has the same UUIDs.
  std::array<uint8_t, 16> device_uuid{}, driver_uuid{};

  // Subgroups: subgroup_size is the default the driver reports; with size control a pipeline may
  // require any power of two in [min_subgroup_size, max_subgroup_size].
  uint32_t subgroup_size = 1, min_subgroup_size = 1, max_subgroup_size = 1;
  // A context's info: nonzero where every pipeline requires this subgroup size (the profile's
  // "subgroup_size_preferred"); subgroup_size, min_subgroup_size and max_subgroup_size are then this size.
  uint32_t pipeline_subgroup_size = 0;
  bool subgroup_size_control = false, compute_full_subgroups = false;
  bool compute_required_subgroup_size = false;  // requiredSubgroupSizeStages has COMPUTE
  VkSubgroupFeatureFlags subgroup_operations = 0;
  VkShaderStageFlags subgroup_stages = 0;

  uint32_t max_shared_memory = 0;  // maxComputeSharedMemorySize, bytes
  // maxComputeWorkGroupInvocations; in a context that requires a subgroup size, at most that size times
  // maxComputeWorkgroupSubgroups (a larger workgroup cannot require it).
  uint32_t max_workgroup_invocations = 0;
  uint32_t max_workgroup_subgroups = 0;  // maxComputeWorkgroupSubgroups (0: unknown, no size control)
  std::array<uint32_t, 3> max_workgroup_size{}, max_workgroup_count{};
  uint32_t max_push_constants = 0;
  uint32_t max_storage_buffer_range = 0;
  VkDeviceSize max_allocation_size = 0;  // maxMemoryAllocationSize
  VkDeviceSize device_local_heap = 0;    // largest DEVICE_LOCAL heap, bytes

  uint32_t compute_queue_family = 0;
  float timestamp_period = 0;  // ns per tick
  uint32_t timestamp_valid_bits = 0;

  bool shader_float16 = false, shader_int8 = false, shader_int16 = false, shader_int64 = false, shader_float64 = false;
  bool storage_buffer_16bit = false, storage_buffer_8bit = false;
  bool subgroup_extended_types = false, scalar_block_layout = false, vulkan_memory_model = false;
  // With vulkanMemoryModel enabled, Device-scope barriers and atomics (every cross-workgroup ticket) need it too.
  bool vulkan_memory_model_device_scope = false;
  bool integer_dot_product = false;
  bool float32_atomic_add = false;  // VK_EXT_shader_atomic_float's shaderBufferFloat32AtomicAdd
  bool push_descriptor = false;
  bool cooperative_matrix = false;
  std::vector<CoopMatrixConfig> cooperative_matrix_configs;
  std::vector<std::string> extensions;

  bool has_extension(std::string_view name) const;
  // A subgroup-scope cooperative-matrix shape m x n x k, A and B of component type `ab`, C and the result of
  // `acc` (VkComponentTypeKHR: 0 f16, 1 f32), not saturating; false where the extension is not enabled.
  bool has_cooperative_matrix(uint32_t m, uint32_t n, uint32_t k, uint32_t ab, uint32_t acc) const;
  bool has_subgroup_operation(VkSubgroupFeatureFlagBits op) const { return (subgroup_operations & op) != 0; }
  std::string type_name() const;           // "discrete", "integrated", "cpu", ...
  std::string api_version_string() const;  // "1.3.230"
  std::string summary() const;             // multi-line, for `hybridlab devices`
};

// Lowercase name with non-alphanumerics as '-', the parenthesised tail dropped, for report folders:
// "NVIDIA H200" -> "nvidia-h200", "llvmpipe (LLVM 15.0.6, 256 bits)" -> "llvmpipe".
std::string device_slug(std::string_view device_name);

namespace detail {
DeviceInfo query_device_info(const Functions& f, VkPhysicalDevice pd, uint32_t index);

// The feature structs the runtime reads (query_device_info) and enables (Context::create), chained as
// the device's version and extensions allow. Needs a Vulkan 1.2 device.
struct FeatureChain {
  VkPhysicalDeviceFeatures2 features2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceSubgroupSizeControlFeatures size_control{
      // before 1.3: the EXT's struct
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
  khr::PhysicalDeviceCooperativeMatrixFeatures coop;
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT atomic_float{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};

  FeatureChain(const DeviceInfo& d, bool with_cooperative_matrix);
  FeatureChain(const FeatureChain&) = delete;  // the chain points into itself
  FeatureChain& operator=(const FeatureChain&) = delete;
  void read_into(DeviceInfo& d) const;  // after vkGetPhysicalDeviceFeatures2(&features2)
  void enable(const DeviceInfo& d);     // sets exactly the features kernels may use
};
}  // namespace detail

}  // namespace hl::vk
