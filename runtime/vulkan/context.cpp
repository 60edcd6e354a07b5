// Instance, validation messenger, device selection and logical-device creation.
#include "runtime/vulkan/context.h"

#include "runtime/vulkan/buffer.h"
#include "runtime/vulkan/commands.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace hl::vk {

struct Context::ValidationLog {
  static constexpr size_t keep = 16;  // texts kept; the count goes on
  mutable std::mutex mutex;
  size_t count = 0;
  std::vector<std::string> first;
};

namespace {

constexpr const char* validation_layer = "VK_LAYER_KHRONOS_validation";

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// Called by the layers from any thread: count, keep the first texts, print every one.
VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(VkDebugUtilsMessageSeverityFlagBitsEXT,
                                                     VkDebugUtilsMessageTypeFlagsEXT,
                                                     const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  auto* log = static_cast<Context::ValidationLog*>(user);
  std::string text = data && data->pMessage ? data->pMessage : "(no message)";
  std::fprintf(stderr, "vulkan validation: %s\n", text.c_str());
  std::lock_guard lock(log->mutex);
  ++log->count;
  if (log->first.size() < log->keep) log->first.push_back(std::move(text));
  return VK_FALSE;  // never abort the call: the error surfaces through validation_messages()
}

VkDebugUtilsMessengerCreateInfoEXT messenger_info(Context::ValidationLog* log) {
  VkDebugUtilsMessengerCreateInfoEXT info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  info.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  info.pfnUserCallback = on_validation_message;
  info.pUserData = log;
  return info;
}

// The layer's Vulkan version, or 0 when it is not installed.
uint32_t layer_version(const Functions& f, const char* name) {
  uint32_t n = 0;
  check(f.vkEnumerateInstanceLayerProperties(&n, nullptr), "vkEnumerateInstanceLayerProperties");
  std::vector<VkLayerProperties> layers(n);
  check(f.vkEnumerateInstanceLayerProperties(&n, layers.data()), "vkEnumerateInstanceLayerProperties");
  for (const auto& l : layers)
    if (std::string_view(l.layerName) == name) return l.specVersion;
  return 0;
}

// An instance extension of the implementation (layer null) or of the named layer.
bool has_instance_extension(const Functions& f, const char* name, const char* layer = nullptr) {
  uint32_t n = 0;
  check(f.vkEnumerateInstanceExtensionProperties(layer, &n, nullptr), "vkEnumerateInstanceExtensionProperties");
  std::vector<VkExtensionProperties> exts(n);
  check(f.vkEnumerateInstanceExtensionProperties(layer, &n, exts.data()), "vkEnumerateInstanceExtensionProperties");
  return std::any_of(exts.begin(), exts.end(),
                     [&](const auto& e) { return std::string_view(e.extensionName) == name; });
}

// With a log: validation layer, debug utils and a messenger that also covers instance creation.
VkInstance create_instance(Functions& f, Context::ValidationLog* log) {
  uint32_t version = VK_API_VERSION_1_0;
  check(f.vkEnumerateInstanceVersion(&version), "vkEnumerateInstanceVersion");
  if (version < VK_API_VERSION_1_1) throw Error("the Vulkan loader supports only Vulkan 1.0; hybridlab needs 1.1+");

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "hybridlab";
  app.apiVersion = std::min<uint32_t>(version, VK_API_VERSION_1_3);
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  std::vector<const char*> layers, extensions;
  if (has_instance_extension(f, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
    extensions.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
    ci.flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
  }
  VkDebugUtilsMessengerCreateInfoEXT mi{};
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  const VkValidationFeatureEnableEXT sync = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
  if (log) {
    if (!layer_version(f, validation_layer))
      throw Error(
          fmt::format("validation requested (HYBRIDLAB_VALIDATION=1) but {} is not installed: "
                      "install vulkan-validationlayers",
                      validation_layer));
    layers.push_back(validation_layer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);  // the layer provides it
    mi = messenger_info(log);
    ci.pNext = &mi;
    // Synchronization validation as well (hazards between dispatches, copies and host access), where the
    // layer offers it; HYBRIDLAB_SYNC_VALIDATION=0 leaves it off.
    if (env("HYBRIDLAB_SYNC_VALIDATION") != "0" &&
        has_instance_extension(f, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME, validation_layer)) {
      extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
      features.enabledValidationFeatureCount = 1;
      features.pEnabledValidationFeatures = &sync;
      mi.pNext = &features;
    }
  }
  ci.enabledLayerCount = uint32_t(layers.size());
  ci.ppEnabledLayerNames = layers.data();
  ci.enabledExtensionCount = uint32_t(extensions.size());
  ci.ppEnabledExtensionNames = extensions.data();
  VkInstance instance = VK_NULL_HANDLE;
  VkResult r = f.vkCreateInstance(&ci, nullptr, &instance);
  check(r, "vkCreateInstance",
        r == VK_ERROR_INCOMPATIBLE_DRIVER ? "no usable Vulkan driver: install one (mesa-vulkan-drivers gives lavapipe) "
                                            "or point VK_DRIVER_FILES at its ICD json"
        : log                             ? "with VK_LAYER_KHRONOS_validation"
                                          : "");
  f.load_instance(instance);
  return instance;
}

// The physical devices and their infos, each device once: the loader enumerates a device once per ICD manifest
// that names its driver (one in /etc/vulkan/icd.d and one in /usr/share/vulkan/icd.d, say), and those entries have
// the same device and driver UUIDs. Indices are positions in this list (what --device N selects).
std::vector<std::pair<VkPhysicalDevice, DeviceInfo>> unique_devices(const Functions& f, VkInstance instance) {
  uint32_t n = 0;
  check(f.vkEnumeratePhysicalDevices(instance, &n, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> pds(n);
  check(f.vkEnumeratePhysicalDevices(instance, &n, pds.data()), "vkEnumeratePhysicalDevices");
  pds.resize(n);
  std::vector<std::pair<VkPhysicalDevice, DeviceInfo>> out;
  for (VkPhysicalDevice pd : pds) {
    DeviceInfo d = detail::query_device_info(f, pd, uint32_t(out.size()));
    const bool known_ids = d.device_uuid != decltype(d.device_uuid){};
    const bool seen = known_ids && std::any_of(out.begin(), out.end(), [&](const auto& e) {
      return e.second.device_uuid == d.device_uuid && e.second.driver_uuid == d.driver_uuid && e.second.name == d.name;
    });
    if (!seen) out.emplace_back(pd, std::move(d));
  }
  return out;
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = char(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

std::string device_list(const std::vector<DeviceInfo>& devices) {
  std::string s;
  for (const auto& d : devices)
    s += fmt::format("{}{}: {} [{}, {}]", s.empty() ? "" : "; ", d.index, d.name, d.type_name(), d.driver_name);
  return s;
}

bool usable(const DeviceInfo& d) { return d.api_version >= VK_API_VERSION_1_2 && d.compute_queue_family != UINT32_MAX; }

const DeviceInfo& select_device(const std::vector<DeviceInfo>& devices, const std::string& selector) {
  if (devices.empty()) throw Error("no Vulkan devices found: install a driver (e.g. mesa-vulkan-drivers for lavapipe)");
  const DeviceInfo* chosen = nullptr;
  if (selector.empty()) {
    auto rank = [](const DeviceInfo& d) {
      return d.type == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU     ? 0
             : d.type == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ? 1
                                                                : 2;
    };
    for (const auto& d : devices)
      if (usable(d) && (!chosen || rank(d) < rank(*chosen))) chosen = &d;
    if (!chosen) throw Error("no Vulkan device supports Vulkan 1.2 compute; devices: " + device_list(devices));
    return *chosen;
  }
  uint32_t index = 0;
  auto [end, ec] = std::from_chars(selector.data(), selector.data() + selector.size(), index);
  if (ec == std::errc() && end == selector.data() + selector.size()) {  // a number: an index
    if (index < devices.size()) chosen = &devices[index];
  } else {
    for (const auto& d : devices)
      if (lower(d.name).find(lower(selector)) != std::string::npos || device_slug(d.name) == lower(selector)) {
        chosen = &d;
        break;
      }
  }
  if (!chosen)
    throw Error(fmt::format("no Vulkan device matches '{}'; available devices: {}", selector, device_list(devices)));
  if (!usable(*chosen))
    throw Error(fmt::format("device '{}' has Vulkan {} or no compute queue; hybridlab needs Vulkan 1.2 compute",
                            chosen->name, chosen->api_version_string()));
  return *chosen;
}

std::vector<char> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return in ? std::vector<char>(std::istreambuf_iterator<char>(in), {}) : std::vector<char>{};
}

}  // namespace

std::vector<DeviceInfo> list_devices() {
  Functions f;
  VkInstance instance = create_instance(f, nullptr);
  std::vector<DeviceInfo> devices;
  try {
    for (auto& [pd, info] : unique_devices(f, instance)) devices.push_back(std::move(info));
  } catch (...) {
    f.vkDestroyInstance(instance, nullptr);
    throw;
  }
  f.vkDestroyInstance(instance, nullptr);
  return devices;
}

// "subgroup_size_preferred" (read once, here): every pipeline of the context requires that subgroup size where the
// device can require it (amd-rdna4: 32, the size its WMMA runs at, where RADV reports 64 and may run either), and the info
// the kernels size their workgroups by names that size alone. A size the device cannot require is an Error when it
// was asked for (HYBRIDLAB_TUNE, ContextOptions::tune), and left alone when it is only the profile's default.
static void pin_subgroup_size(DeviceInfo& d, const DeviceProfile& profile) {
  const uint32_t p = profile.get("subgroup_size_preferred");
  if (p == 0) return;
  if (!std::has_single_bit(p) || p < d.min_subgroup_size || p > d.max_subgroup_size || !d.subgroup_size_control ||
      !d.compute_required_subgroup_size) {
    if (p == DeviceProfile::for_device(d).get("subgroup_size_preferred")) return;
    throw Error(fmt::format("subgroup_size_preferred={}: {} runs compute subgroups of {} to {} invocations{}", p, d.name,
                            d.min_subgroup_size, d.max_subgroup_size,
                            d.subgroup_size_control && d.compute_required_subgroup_size ? "" : " and cannot require a size"));
  }
  d.pipeline_subgroup_size = d.subgroup_size = d.min_subgroup_size = d.max_subgroup_size = p;
  if (d.max_workgroup_subgroups) d.max_workgroup_invocations = std::min(d.max_workgroup_invocations, p * d.max_workgroup_subgroups);
}

std::unique_ptr<Context> Context::create(const ContextOptions& options) {
  std::unique_ptr<Context> ctx(new Context());  // its destructor cleans up whatever got created
  Context& c = *ctx;
  const bool validation = options.validation.value_or(env("HYBRIDLAB_VALIDATION") == "1");
  if (validation) c.validation_ = std::make_unique<ValidationLog>();
  c.instance_ = create_instance(c.fn_, c.validation_.get());
  if (validation) {
    auto mi = messenger_info(c.validation_.get());
    check(c.fn_.vkCreateDebugUtilsMessengerEXT(c.instance_, &mi, nullptr, &c.messenger_),
          "vkCreateDebugUtilsMessengerEXT");
  }

  std::vector<VkPhysicalDevice> pds;
  std::vector<DeviceInfo> devices;
  for (auto& [pd, info] : unique_devices(c.fn_, c.instance_)) pds.push_back(pd), devices.push_back(std::move(info));
  const std::string selector = options.device.empty() ? env("HYBRIDLAB_DEVICE") : options.device;
  c.info_ = select_device(devices, selector);
  c.physical_device_ = pds[c.info_.index];
  // A validation layer older than VK_KHR_cooperative_matrix (1.3.255; Debian 12 ships 1.3.239) reports
  // the extension and its feature struct as errors: under such a layer, cooperative matrix is off.
  if (validation && c.info_.cooperative_matrix &&
      layer_version(c.fn_, validation_layer) < VK_MAKE_API_VERSION(0, 1, 3, 255)) {
    std::fprintf(stderr, "vulkan validation: this %s predates VK_KHR_cooperative_matrix; not enabling it\n",
                 validation_layer);
    c.info_.cooperative_matrix = false;
    c.info_.cooperative_matrix_configs.clear();
  }
  // Off by request (the scalar plan: what a device without matrix units runs): every cooperative-matrix variant is
  // then unavailable and the automatic picks take their scalar kernels.
  if (!options.cooperative_matrices.value_or(env("HYBRIDLAB_COOPMAT") != "0")) {
    c.info_.cooperative_matrix = false;
    c.info_.cooperative_matrix_configs.clear();
  }
  const DeviceInfo& d = c.info_;
  const bool v13 = d.api_version >= VK_API_VERSION_1_3;

  // Enable what kernels may use, where the device has it.
  detail::FeatureChain feats(d, d.cooperative_matrix);
  feats.enable(d);
  std::vector<const char*> extensions;
  if (!v13 && d.subgroup_size_control) extensions.push_back(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  if (d.cooperative_matrix) extensions.push_back(khr::cooperative_matrix_extension);
  if (d.float32_atomic_add) extensions.push_back(VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
  c.push_descriptors_ = d.push_descriptor && options.use_push_descriptors;
  if (c.push_descriptors_) extensions.push_back(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  if (d.has_extension("VK_KHR_portability_subset")) extensions.push_back("VK_KHR_portability_subset");
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR exec_props{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  if (options.pipeline_stats.value_or(env("HYBRIDLAB_PIPELINE_STATS") == "1")) {
    if (d.has_extension(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME)) {
      c.pipeline_stats_ = true;
      extensions.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
      exec_props.pipelineExecutableInfo = VK_TRUE;
      exec_props.pNext = &feats.features2;
    } else {
      std::fprintf(stderr, "pipeline stats: %s has no %s; none reported\n", d.name.c_str(),
                   VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    }
  }

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qi.queueFamilyIndex = d.compute_queue_family;
  qi.queueCount = 1;
  qi.pQueuePriorities = &priority;
  VkDeviceCreateInfo ci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  ci.pNext = c.pipeline_stats_ ? static_cast<void*>(&exec_props) : static_cast<void*>(&feats.features2);
  ci.queueCreateInfoCount = 1;
  ci.pQueueCreateInfos = &qi;
  ci.enabledExtensionCount = uint32_t(extensions.size());
  ci.ppEnabledExtensionNames = extensions.data();
  check(c.fn_.vkCreateDevice(c.physical_device_, &ci, nullptr, &c.device_), "vkCreateDevice", d.name);
  c.fn_.load_device(c.device_);
  c.fn_.vkGetDeviceQueue(c.device_, d.compute_queue_family, 0, &c.queue_);
  c.fn_.vkGetPhysicalDeviceMemoryProperties(c.physical_device_, &c.memory_);

  c.profile_ = DeviceProfile::for_device(d);
  c.profile_.apply_overrides(env("HYBRIDLAB_TUNE"));
  c.profile_.apply_overrides(options.tune);
  pin_subgroup_size(c.info_, c.profile_);

  // The driver ignores initial data from another device or driver version, so any file is safe.
  c.pipeline_cache_path_ =
      options.pipeline_cache_path.empty() ? env("HYBRIDLAB_PIPELINE_CACHE") : options.pipeline_cache_path;
  std::vector<char> initial = c.pipeline_cache_path_.empty() ? std::vector<char>{} : read_file(c.pipeline_cache_path_);
  VkPipelineCacheCreateInfo pci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  pci.initialDataSize = initial.size();
  pci.pInitialData = initial.data();
  check(c.fn_.vkCreatePipelineCache(c.device_, &pci, nullptr, &c.pipeline_cache_), "vkCreatePipelineCache",
        c.pipeline_cache_path_);
  return ctx;
}

Context::~Context() {
  if (device_) {
    fn_.vkDeviceWaitIdle(device_);
    for (auto f = teardown_.rbegin(); f != teardown_.rend(); ++f) (*f)();
    staging_.reset();
    transfer_.reset();
    if (pipeline_cache_) {
      try {
        save_pipeline_cache();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "hybridlab: %s\n", e.what());
      }
      fn_.vkDestroyPipelineCache(device_, pipeline_cache_, nullptr);
    }
    fn_.vkDestroyDevice(device_, nullptr);
  }
  if (messenger_) fn_.vkDestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
  if (instance_) fn_.vkDestroyInstance(instance_, nullptr);
}

void Context::save_pipeline_cache() const {
  if (pipeline_cache_path_.empty()) return;
  size_t size = 0;
  check(fn_.vkGetPipelineCacheData(device_, pipeline_cache_, &size, nullptr), "vkGetPipelineCacheData");
  std::vector<char> data(size);
  check(fn_.vkGetPipelineCacheData(device_, pipeline_cache_, &size, data.data()), "vkGetPipelineCacheData");
  // Write then rename, so a concurrent reader never sees half a file.
  const std::string tmp = pipeline_cache_path_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(data.data(), std::streamsize(size));
    if (!out) throw Error(fmt::format("cannot write pipeline cache {}", tmp));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, pipeline_cache_path_, ec);
  if (ec) throw Error(fmt::format("cannot write pipeline cache {}: {}", pipeline_cache_path_, ec.message()));
}

void Context::wait_idle() const { check(fn_.vkDeviceWaitIdle(device_), "vkDeviceWaitIdle", info_.name); }

size_t Context::validation_message_count() const {
  if (!validation_) return 0;
  std::lock_guard lock(validation_->mutex);
  return validation_->count;
}

std::vector<std::string> Context::validation_messages() const {
  if (!validation_) return {};
  std::lock_guard lock(validation_->mutex);
  return validation_->first;
}

void Context::clear_validation_messages() {
  if (!validation_) return;
  std::lock_guard lock(validation_->mutex);
  validation_->count = 0;
  validation_->first.clear();
}

Buffer& Context::staging(VkDeviceSize bytes) {
  if (!staging_ || staging_->size() < bytes) {
    VkDeviceSize size = std::max<VkDeviceSize>(bytes, VkDeviceSize(1) << 20);
    if (staging_)
      size = std::max(size, std::min(staging_->size() * 2, info_.max_allocation_size));  // grow geometrically
    staging_.reset();
    staging_ = std::make_unique<Buffer>(*this, size, BufferKind::Staging, "staging");
  }
  return *staging_;
}

CommandList& Context::transfer_commands() {
  if (!transfer_) transfer_ = std::make_unique<CommandList>(*this, "transfer");
  return *transfer_;
}

}  // namespace hl::vk
