// Vulkan entry points without linking libvulkan: the loader is dlopen'ed at first use, so a machine
// without it gets a clear Error instead of a binary that fails to start. Every Vulkan function the
// runtime calls is listed once below; Functions holds the pointers of one instance and device.
#pragma once

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <vulkan/vulkan.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace hl::vk {

// Every runtime failure: one line naming the call, the VkResult and what was being done.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

const char* result_name(VkResult r);

// Throws "CALL failed: VK_ERROR_... (context)" unless r is VK_SUCCESS.
void check(VkResult r, const char* call, std::string_view context = {});

// VK_KHR_cooperative_matrix postdates the Debian 1.3.239 headers: the few declarations the runtime
// needs, with the values of the Vulkan registry.
namespace khr {
inline constexpr const char* cooperative_matrix_extension = "VK_KHR_cooperative_matrix";
inline constexpr auto STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES = VkStructureType(1000506000);
inline constexpr auto STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES = VkStructureType(1000506001);
struct PhysicalDeviceCooperativeMatrixFeatures {
  VkStructureType sType = STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES;
  void* pNext = nullptr;
  VkBool32 cooperativeMatrix = VK_FALSE;
  VkBool32 cooperativeMatrixRobustBufferAccess = VK_FALSE;
};
struct CooperativeMatrixProperties {
  VkStructureType sType = STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES;
  void* pNext = nullptr;
  uint32_t MSize = 0, NSize = 0, KSize = 0;
  uint32_t AType = 0, BType = 0, CType = 0, ResultType = 0;  // VkComponentTypeKHR
  VkBool32 saturatingAccumulation = VK_FALSE;
  uint32_t scope = 0;  // VkScopeKHR: 1 device, 2 workgroup, 3 subgroup, 5 queue family
};
using PFN_GetPhysicalDeviceCooperativeMatrixProperties = VkResult(VKAPI_PTR*)(VkPhysicalDevice, uint32_t*,
                                                                              CooperativeMatrixProperties*);
const char* component_type_name(uint32_t t);  // "f16", "f32", "s8", "bf16", ...
}  // namespace khr

// clang-format off
#define HL_VK_GLOBAL_FUNCTIONS(X) \
  X(vkCreateInstance) X(vkEnumerateInstanceLayerProperties) X(vkEnumerateInstanceExtensionProperties) \
  X(vkEnumerateInstanceVersion)

#define HL_VK_INSTANCE_FUNCTIONS(X) \
  X(vkDestroyInstance) X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties2) \
  X(vkGetPhysicalDeviceFeatures2) X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkGetPhysicalDeviceMemoryProperties) X(vkEnumerateDeviceExtensionProperties) X(vkCreateDevice) \
  X(vkGetDeviceProcAddr)

// Instance functions of optional extensions: null when absent.
#define HL_VK_OPTIONAL_INSTANCE_FUNCTIONS(X) \
  X(vkCreateDebugUtilsMessengerEXT) X(vkDestroyDebugUtilsMessengerEXT)

#define HL_VK_DEVICE_FUNCTIONS(X) \
  X(vkDestroyDevice) X(vkGetDeviceQueue) X(vkDeviceWaitIdle) X(vkQueueSubmit) \
  X(vkCreateBuffer) X(vkDestroyBuffer) X(vkGetBufferMemoryRequirements) X(vkAllocateMemory) \
  X(vkFreeMemory) X(vkBindBufferMemory) X(vkMapMemory) X(vkUnmapMemory) \
  X(vkCreateShaderModule) X(vkDestroyShaderModule) X(vkCreateDescriptorSetLayout) \
  X(vkDestroyDescriptorSetLayout) X(vkCreatePipelineLayout) X(vkDestroyPipelineLayout) \
  X(vkCreateComputePipelines) X(vkDestroyPipeline) X(vkCreatePipelineCache) X(vkDestroyPipelineCache) \
  X(vkGetPipelineCacheData) X(vkCreateDescriptorPool) X(vkDestroyDescriptorPool) \
  X(vkResetDescriptorPool) X(vkAllocateDescriptorSets) X(vkUpdateDescriptorSets) \
  X(vkCreateCommandPool) X(vkDestroyCommandPool) X(vkAllocateCommandBuffers) X(vkResetCommandBuffer) \
  X(vkBeginCommandBuffer) X(vkEndCommandBuffer) X(vkCmdBindPipeline) X(vkCmdBindDescriptorSets) \
  X(vkCmdPushConstants) X(vkCmdDispatch) X(vkCmdPipelineBarrier) X(vkCmdFillBuffer) X(vkCmdCopyBuffer) \
  X(vkCmdWriteTimestamp) X(vkCmdResetQueryPool) X(vkCreateQueryPool) X(vkDestroyQueryPool) \
  X(vkGetQueryPoolResults) X(vkCreateFence) X(vkDestroyFence) X(vkResetFences) X(vkWaitForFences)

// Device functions of optional extensions: null when the extension is not enabled.
#define HL_VK_OPTIONAL_DEVICE_FUNCTIONS(X) X(vkCmdPushDescriptorSetKHR) \
  X(vkGetPipelineExecutablePropertiesKHR) X(vkGetPipelineExecutableStatisticsKHR)
// clang-format on

#define HL_VK_DECLARE_POINTER(name) PFN_##name name = nullptr;

// Function pointers of one instance and its device. Global functions are filled at construction.
struct Functions {
  HL_VK_GLOBAL_FUNCTIONS(HL_VK_DECLARE_POINTER)
  HL_VK_INSTANCE_FUNCTIONS(HL_VK_DECLARE_POINTER)
  HL_VK_OPTIONAL_INSTANCE_FUNCTIONS(HL_VK_DECLARE_POINTER)
  HL_VK_DEVICE_FUNCTIONS(HL_VK_DECLARE_POINTER)
  HL_VK_OPTIONAL_DEVICE_FUNCTIONS(HL_VK_DECLARE_POINTER)
  khr::PFN_GetPhysicalDeviceCooperativeMatrixProperties vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR = nullptr;

  Functions();  // opens the loader (Error when there is none) and loads the global functions
  void load_instance(VkInstance instance);
  void load_device(VkDevice device);
};

}  // namespace hl::vk
