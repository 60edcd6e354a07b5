// DeviceInfo queries: one properties chain and one features chain per physical device.
#include "runtime/vulkan/device.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace hl::vk {

std::string CoopMatrixConfig::str() const {
  using khr::component_type_name;
  const char* scope_name = scope == 3 ? "subgroup" : scope == 2 ? "workgroup" : scope == 1 ? "device" : "other";
  return fmt::format("{}x{}x{} {}*{}+{}->{}{} {}", m, n, k, component_type_name(a_type), component_type_name(b_type),
                     component_type_name(c_type), component_type_name(result_type), saturating ? " sat" : "",
                     scope_name);
}

bool DeviceInfo::has_extension(std::string_view ext) const {
  return std::find(extensions.begin(), extensions.end(), ext) != extensions.end();
}

bool DeviceInfo::has_cooperative_matrix(uint32_t m, uint32_t n, uint32_t k, uint32_t ab, uint32_t acc) const {
  return cooperative_matrix && std::any_of(cooperative_matrix_configs.begin(), cooperative_matrix_configs.end(), [&](const auto& c) {
           return c.m == m && c.n == n && c.k == k && c.a_type == ab && c.b_type == ab && c.c_type == acc &&
                  c.result_type == acc && !c.saturating && c.scope == 3;
         });
}

std::string DeviceInfo::type_name() const {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}

std::string DeviceInfo::api_version_string() const {
  return fmt::format("{}.{}.{}", VK_API_VERSION_MAJOR(api_version), VK_API_VERSION_MINOR(api_version),
                     VK_API_VERSION_PATCH(api_version));
}

std::string DeviceInfo::summary() const {
  auto yn = [](bool b) { return b ? "yes" : "no"; };
  std::string s = fmt::format("{}: {} [{}, vendor 0x{:04x}, Vulkan {}]\n", index, name, type_name(), vendor_id,
                              api_version_string());
  s += fmt::format("  driver: {} {}\n", driver_name, driver_info);
  s += fmt::format("  subgroup: {} (min {}, max {}, size control {}, ops 0x{:x})\n", subgroup_size, min_subgroup_size,
                   max_subgroup_size, yn(subgroup_size_control), subgroup_operations);
  s += fmt::format("  compute: shared {} KiB, {} invocations, workgroup {}x{}x{}, push constants {} B\n",
                   max_shared_memory / 1024, max_workgroup_invocations, max_workgroup_size[0], max_workgroup_size[1],
                   max_workgroup_size[2], max_push_constants);
  s += fmt::format("  memory: device-local heap {} MiB, storage buffer range {} MiB, allocation {} MiB\n",
                   device_local_heap >> 20, max_storage_buffer_range >> 20, max_allocation_size >> 20);
  s += fmt::format("  timestamps: {} valid bits, {} ns/tick\n", timestamp_valid_bits, timestamp_period);
  s += fmt::format("  types: f16 {}, i8 {}, i64 {}, f64 {}, 16-bit storage {}, 8-bit storage {}, int dot {}, f32 atomic add {}\n",
                   yn(shader_float16), yn(shader_int8), yn(shader_int64), yn(shader_float64), yn(storage_buffer_16bit),
                   yn(storage_buffer_8bit), yn(integer_dot_product), yn(float32_atomic_add));
  s += fmt::format("  cooperative matrix: {}\n", yn(cooperative_matrix));
  for (const auto& c : cooperative_matrix_configs) s += "    " + c.str() + "\n";
  return s;
}

std::string device_slug(std::string_view device_name) {
  device_name = device_name.substr(0, device_name.find('('));
  std::string slug;
  for (char c : device_name) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      slug += char(std::tolower(static_cast<unsigned char>(c)));
    else if (!slug.empty() && slug.back() != '-')
      slug += '-';
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return slug.empty() ? "unknown-device" : slug;
}

namespace detail {

DeviceInfo query_device_info(const Functions& f, VkPhysicalDevice pd, uint32_t index) {
  DeviceInfo d;
  d.index = index;

  uint32_t n = 0;
  check(f.vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr), "vkEnumerateDeviceExtensionProperties");
  std::vector<VkExtensionProperties> exts(n);
  check(f.vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, exts.data()), "vkEnumerateDeviceExtensionProperties");
  for (const auto& e : exts) d.extensions.emplace_back(e.extensionName);

  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  f.vkGetPhysicalDeviceProperties2(pd, &props);
  const VkPhysicalDeviceProperties& p = props.properties;
  d.name = p.deviceName;
  d.vendor_id = p.vendorID;
  d.device_id = p.deviceID;
  d.type = p.deviceType;
  d.api_version = p.apiVersion;
  const bool v12 = p.apiVersion >= VK_API_VERSION_1_2, v13 = p.apiVersion >= VK_API_VERSION_1_3;
  const bool size_control_ext = v13 || d.has_extension(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);

  // Structs only chained where the device's version or extensions define them (validation checks).
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceMaintenance3Properties maint3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceSubgroupSizeControlProperties size_control{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  props.pNext = &subgroup;
  subgroup.pNext = &maint3;
  void** tail = &maint3.pNext;  // `*tail = &s, tail = &s.pNext` appends s to the chain
  if (v12) *tail = &driver, tail = &driver.pNext;
  if (size_control_ext) *tail = &size_control, tail = &size_control.pNext;
  VkPhysicalDeviceIDProperties ids{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
  if (p.apiVersion >= VK_API_VERSION_1_1) *tail = &ids, tail = &ids.pNext;
  f.vkGetPhysicalDeviceProperties2(pd, &props);
  std::copy_n(ids.deviceUUID, VK_UUID_SIZE, d.device_uuid.begin());
  std::copy_n(ids.driverUUID, VK_UUID_SIZE, d.driver_uuid.begin());

  d.driver_id = driver.driverID;
  d.driver_name = v12 ? driver.driverName : "";
  d.driver_info = v12 ? driver.driverInfo : "";
  d.subgroup_size = d.min_subgroup_size = d.max_subgroup_size = subgroup.subgroupSize;
  d.subgroup_operations = subgroup.supportedOperations;
  d.subgroup_stages = subgroup.supportedStages;
  if (size_control_ext) {
    d.min_subgroup_size = size_control.minSubgroupSize;
    d.max_subgroup_size = size_control.maxSubgroupSize;
    d.compute_required_subgroup_size = (size_control.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
    d.max_workgroup_subgroups = size_control.maxComputeWorkgroupSubgroups;
  }
  d.max_allocation_size = maint3.maxMemoryAllocationSize;
  const VkPhysicalDeviceLimits& l = p.limits;
  d.max_shared_memory = l.maxComputeSharedMemorySize;
  d.max_workgroup_invocations = l.maxComputeWorkGroupInvocations;
  std::copy_n(l.maxComputeWorkGroupSize, 3, d.max_workgroup_size.begin());
  std::copy_n(l.maxComputeWorkGroupCount, 3, d.max_workgroup_count.begin());
  d.max_push_constants = l.maxPushConstantsSize;
  d.max_storage_buffer_range = l.maxStorageBufferRange;
  d.timestamp_period = l.timestampPeriod;

  const bool coop_ext = d.has_extension(khr::cooperative_matrix_extension);
  if (v12) {
    FeatureChain feats(d, coop_ext);
    f.vkGetPhysicalDeviceFeatures2(pd, &feats.features2);
    feats.read_into(d);
  }
  d.push_descriptor = d.has_extension(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  d.cooperative_matrix = d.cooperative_matrix && f.vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR;
  if (d.cooperative_matrix) {
    uint32_t count = 0;
    check(f.vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR(pd, &count, nullptr),
          "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR");
    std::vector<khr::CooperativeMatrixProperties> cm(count);
    check(f.vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR(pd, &count, cm.data()),
          "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR");
    for (const auto& c : cm)
      d.cooperative_matrix_configs.push_back(
          {c.MSize, c.NSize, c.KSize, c.AType, c.BType, c.CType, c.ResultType, c.saturatingAccumulation != 0, c.scope});
  }

  // The compute queue: the first family with compute and timestamps, else the first with compute.
  f.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  f.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, families.data());
  int chosen = -1;
  for (uint32_t i = 0; i < n; ++i) {
    if (!(families[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
    if (chosen < 0 || (families[chosen].timestampValidBits == 0 && families[i].timestampValidBits > 0)) chosen = int(i);
  }
  if (chosen >= 0) {
    d.compute_queue_family = uint32_t(chosen);
    d.timestamp_valid_bits = families[chosen].timestampValidBits;
  } else {
    d.compute_queue_family = UINT32_MAX;  // Context::create rejects such a device
  }

  VkPhysicalDeviceMemoryProperties mem{};
  f.vkGetPhysicalDeviceMemoryProperties(pd, &mem);
  for (uint32_t i = 0; i < mem.memoryHeapCount; ++i)
    if (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      d.device_local_heap = std::max(d.device_local_heap, mem.memoryHeaps[i].size);
  return d;
}

// Features kernels may use, as (struct of the chain, Vulkan field, DeviceInfo member): read by
// query_device_info and enabled by Context::create, so the two never disagree.
#define HL_VK_USED_FEATURES(X)                                 \
  X(features2.features, shaderInt16, shader_int16)             \
  X(features2.features, shaderInt64, shader_int64)             \
  X(features2.features, shaderFloat64, shader_float64)         \
  X(f11, storageBuffer16BitAccess, storage_buffer_16bit)       \
  X(f12, shaderFloat16, shader_float16)                        \
  X(f12, shaderInt8, shader_int8)                              \
  X(f12, storageBuffer8BitAccess, storage_buffer_8bit)         \
  X(f12, shaderSubgroupExtendedTypes, subgroup_extended_types) \
  X(f12, scalarBlockLayout, scalar_block_layout)               \
  X(f12, vulkanMemoryModel, vulkan_memory_model)               \
  X(f12, vulkanMemoryModelDeviceScope, vulkan_memory_model_device_scope) \
  X(f13, shaderIntegerDotProduct, integer_dot_product)         \
  X(coop, cooperativeMatrix, cooperative_matrix)               \
  X(atomic_float, shaderBufferFloat32AtomicAdd, float32_atomic_add)

FeatureChain::FeatureChain(const DeviceInfo& d, bool with_cooperative_matrix) {
  const bool v13 = d.api_version >= VK_API_VERSION_1_3;
  features2.pNext = &f11;
  f11.pNext = &f12;
  void** tail = &f12.pNext;
  if (v13) *tail = &f13, tail = &f13.pNext;
  if (!v13 && d.has_extension(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME))
    *tail = &size_control, tail = &size_control.pNext;
  if (with_cooperative_matrix) *tail = &coop, tail = &coop.pNext;
  if (d.has_extension(VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME)) *tail = &atomic_float, tail = &atomic_float.pNext;
}

void FeatureChain::read_into(DeviceInfo& d) const {
#define HL_READ(chain_struct, field, member) d.member = chain_struct.field;
  HL_VK_USED_FEATURES(HL_READ)
#undef HL_READ
  // Only one of the two structs is in the chain; the other stays zero.
  d.subgroup_size_control = f13.subgroupSizeControl || size_control.subgroupSizeControl;
  d.compute_full_subgroups = f13.computeFullSubgroups || size_control.computeFullSubgroups;
}

void FeatureChain::enable(const DeviceInfo& d) {
#define HL_ENABLE(chain_struct, field, member) chain_struct.field = d.member;
  HL_VK_USED_FEATURES(HL_ENABLE)
#undef HL_ENABLE
  f13.subgroupSizeControl = size_control.subgroupSizeControl = d.subgroup_size_control;
  f13.computeFullSubgroups = size_control.computeFullSubgroups = d.compute_full_subgroups;
}

}  // namespace detail
}  // namespace hl::vk
