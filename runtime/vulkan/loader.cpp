// dlopen of libvulkan.so.1 (the only process-wide state of the runtime) and the function tables.
#include "runtime/vulkan/loader.h"

#include <dlfcn.h>
#include <fmt/format.h>

namespace hl::vk {

// clang-format off
const char* result_name(VkResult r) {
  switch (r) {
#define HL_CASE(x) \
  case x:          \
    return #x;
    HL_CASE(VK_SUCCESS) HL_CASE(VK_NOT_READY) HL_CASE(VK_TIMEOUT) HL_CASE(VK_EVENT_SET) HL_CASE(VK_EVENT_RESET)
    HL_CASE(VK_INCOMPLETE) HL_CASE(VK_ERROR_OUT_OF_HOST_MEMORY) HL_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    HL_CASE(VK_ERROR_INITIALIZATION_FAILED) HL_CASE(VK_ERROR_DEVICE_LOST) HL_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    HL_CASE(VK_ERROR_LAYER_NOT_PRESENT) HL_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    HL_CASE(VK_ERROR_FEATURE_NOT_PRESENT) HL_CASE(VK_ERROR_INCOMPATIBLE_DRIVER) HL_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    HL_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED) HL_CASE(VK_ERROR_FRAGMENTED_POOL) HL_CASE(VK_ERROR_UNKNOWN)
    HL_CASE(VK_ERROR_OUT_OF_POOL_MEMORY) HL_CASE(VK_ERROR_FRAGMENTATION) HL_CASE(VK_PIPELINE_COMPILE_REQUIRED)
    HL_CASE(VK_ERROR_VALIDATION_FAILED_EXT) HL_CASE(VK_ERROR_INVALID_SHADER_NV)
#undef HL_CASE
    default:
      return "VK_RESULT_UNKNOWN";
  }
}
// clang-format on

void check(VkResult r, const char* call, std::string_view context) {
  if (r == VK_SUCCESS) return;
  if (context.empty()) throw Error(fmt::format("{} failed: {}", call, result_name(r)));
  throw Error(fmt::format("{} failed: {} ({})", call, result_name(r), context));
}

const char* khr::component_type_name(uint32_t t) {
  switch (t) {
    case 0: return "f16";
    case 1: return "f32";
    case 2: return "f64";
    case 3: return "s8";
    case 4: return "s16";
    case 5: return "s32";
    case 6: return "s64";
    case 7: return "u8";
    case 8: return "u16";
    case 9: return "u32";
    case 10: return "u64";
    case 1000141000: return "bf16";
    case 1000491000: return "s8packed";
    case 1000491001: return "u8packed";
    case 1000491002: return "e4m3";
    case 1000491003: return "e5m2";
    default: return "?";
  }
}

namespace {

// Opened once and kept for the life of the process (drivers do not like being unloaded).
PFN_vkGetInstanceProcAddr loader_entry() {
  static const PFN_vkGetInstanceProcAddr entry = [] {
    void* lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) throw Error("no Vulkan loader (libvulkan.so.1) found: install libvulkan1 and a driver");
    auto f = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
    if (!f) throw Error("libvulkan.so.1 has no vkGetInstanceProcAddr: broken Vulkan loader");
    return f;
  }();
  return entry;
}

template <class F>
void load(F& slot, PFN_vkVoidFunction f, const char* name, bool required) {
  if (!f && required) throw Error(fmt::format("Vulkan loader or driver lacks {}", name));
  slot = reinterpret_cast<F>(f);
}

}  // namespace

Functions::Functions() {
  auto gipa = loader_entry();
#define HL_LOAD(name) load(name, gipa(VK_NULL_HANDLE, #name), #name, true);
  HL_VK_GLOBAL_FUNCTIONS(HL_LOAD)
#undef HL_LOAD
}

void Functions::load_instance(VkInstance instance) {
  auto gipa = loader_entry();
#define HL_LOAD(name) load(name, gipa(instance, #name), #name, true);
#define HL_LOAD_OPTIONAL(name) load(name, gipa(instance, #name), #name, false);
  HL_VK_INSTANCE_FUNCTIONS(HL_LOAD)
  HL_VK_OPTIONAL_INSTANCE_FUNCTIONS(HL_LOAD_OPTIONAL)
  HL_LOAD_OPTIONAL(vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR)
#undef HL_LOAD
#undef HL_LOAD_OPTIONAL
}

void Functions::load_device(VkDevice device) {
#define HL_LOAD(name) load(name, vkGetDeviceProcAddr(device, #name), #name, true);
#define HL_LOAD_OPTIONAL(name) load(name, vkGetDeviceProcAddr(device, #name), #name, false);
  HL_VK_DEVICE_FUNCTIONS(HL_LOAD)
  HL_VK_OPTIONAL_DEVICE_FUNCTIONS(HL_LOAD_OPTIONAL)
#undef HL_LOAD
#undef HL_LOAD_OPTIONAL
}

}  // namespace hl::vk
