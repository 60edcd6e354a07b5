// The Halide variants: thin wrappers that hand the op's tensors to the AOT pipeline of one schedule as Halide buffers
// (no copies) and take its outputs back as tensors. halide:<op>:<schedule> runs on the CPU (Halide's thread pool, as
// many threads as OpenMP uses) on host memory; halide-vulkan:<op>:<schedule> runs on hybridlab's device buffers (class
// Io) with Halide's Vulkan runtime seeded with hybridlab's instance, device and queue, and its kernels dispatched on
// hybridlab's own stream as hybridlab pipelines (halide_vulkan.cpp; tunable halide.vulkan.own_dispatch = 0: submitted
// and waited for one by one by Halide's runtime, as before).
#include "ops/halide/halide.h"
#include "env.h"

#include <omp.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>

#include "HalideBuffer.h"
#include "HalideRuntime.h"
#include "ops/vulkan_variant.h"
#include "hl_add_plain.h"
#include "hl_add_rmsnorm_plain.h"
#include "hl_add_rmsnorm_plain_two.h"
#include "hl_add_rmsnorm_tuned.h"
#include "hl_add_rmsnorm_tuned_two.h"
#include "hl_add_tuned.h"
#include "hl_attention_plain.h"
#include "hl_attention_tuned.h"
#include "hl_attention_tuned_blocked.h"
#include "hl_attention_tuned_dot.h"
#include "hl_gated_rmsnorm_plain.h"
#include "hl_gdn_prep_plain.h"
#include "hl_gdn_prep_tuned.h"
#include "hl_gated_rmsnorm_tuned.h"
#include "hl_l2norm_plain.h"
#include "hl_l2norm_tuned.h"
#include "hl_matmul_plain.h"
#include "hl_matmul_q8_0_plain.h"
#include "hl_matmul_q8_0_tuned.h"
#include "hl_matmul_tuned.h"
#include "hl_moe_experts_plain.h"
#include "hl_moe_experts_tuned.h"
#include "hl_moe_experts_tuned_p2.h"
#include "hl_moe_experts_tuned_p4.h"
#include "hl_rmsnorm_plain.h"
#include "hl_rmsnorm_tuned.h"
#include "hl_rope_plain.h"
#include "hl_rope_tuned.h"
#include "hl_slice_plain.h"
#include "hl_slice_tuned.h"
#include "hl_ssm_conv_plain.h"
#include "hl_ssm_conv_tuned.h"
#include "hl_ssm_gates_plain.h"
#include "hl_embed_plain.h"
#include "hl_embed_tuned.h"
#include "hl_shared_expert_plain.h"
#include "hl_shared_expert_tuned.h"
#include "hl_moe_router_plain.h"
#include "hl_moe_router_tuned.h"
#include "hl_ssm_gates_tuned.h"
#include "hl_ssm_scan_plain.h"
#include "hl_ssm_scan_one_call.h"
#include "hl_ssm_scan_one_call_c16.h"
#include "hl_ssm_scan_step_tuned.h"
#include "hl_ssm_scan_chunk_tuned.h"
#include "hl_matmul_tuned_t1.h"
#ifdef HYBRIDLAB_HALIDE_VULKAN
#include "HalideRuntimeVulkan.h"
#include "ops/halide/halide_vulkan.h"
#include "hl_add_gpu_plain.h"
#include "hl_add_rmsnorm_gpu_plain.h"
#include "hl_add_rmsnorm_gpu_plain_two.h"
#include "hl_add_rmsnorm_gpu_tuned.h"
#include "hl_add_rmsnorm_gpu_tuned_two.h"
#include "hl_add_gpu_tuned.h"
#include "hl_attention_gpu_plain.h"
#include "hl_attention_gpu_tuned.h"
#include "hl_gated_rmsnorm_gpu_plain.h"
#include "hl_gdn_prep_gpu_plain.h"
#include "hl_gdn_prep_gpu_tuned.h"
#include "hl_gated_rmsnorm_gpu_tuned.h"
#include "hl_l2norm_gpu_plain.h"
#include "hl_l2norm_gpu_tuned.h"
#include "hl_matmul_gpu_plain.h"
#include "hl_matmul_gpu_tuned.h"
#include "hl_moe_experts_gpu_plain.h"
#include "hl_moe_experts_gpu_tuned.h"
#include "hl_rmsnorm_gpu_plain.h"
#include "hl_rmsnorm_gpu_tuned.h"
#include "hl_rope_gpu_plain.h"
#include "hl_rope_gpu_tuned.h"
#include "hl_slice_gpu_plain.h"
#include "hl_slice_gpu_tuned.h"
#include "hl_ssm_conv_gpu_plain.h"
#include "hl_ssm_conv_gpu_tuned.h"
#include "hl_ssm_gates_gpu_plain.h"
#include "hl_embed_gpu_plain.h"
#include "hl_embed_gpu_tuned.h"
#include "hl_shared_expert_gpu_plain.h"
#include "hl_shared_expert_gpu_tuned.h"
#include "hl_moe_router_gpu_plain.h"
#include "hl_moe_router_gpu_tuned.h"
#include "hl_ssm_gates_gpu_tuned.h"
#include "hl_ssm_scan_gpu_plain.h"
#include "hl_ssm_scan_gpu_tuned.h"
#include "hl_sweeps.h"  // the sweep points of hybridlab_halide_sweep (ops/halide/CMakeLists.txt)
#endif

namespace {
thread_local std::string last_halide_error;
}  // namespace

// Halide's runtime reports errors here (this overrides its weak default, which prints and aborts nothing
// either): the message is kept for the exception the wrapper throws.
// Halide's messages may span lines ("...context!\n\n"): one line, as every hybridlab error.
extern "C" void halide_error(void*, const char* msg) {
  std::string m = msg ? msg : "(no message)", line;
  for (char c : m) line += (c == '\n' || c == '\r') ? ' ' : c;
  while (!line.empty() && line.back() == ' ') line.pop_back();
  last_halide_error = line;
}

// Halide's runtime prints through here (overriding its weak default): its Vulkan allocator announces its
// configuration on every context, lines that say nothing about a run; everything else goes to stderr as before.
extern "C" void halide_print(void*, const char* msg) {
  if (!msg || std::string_view(msg).starts_with("Vulkan: Configuring allocator")) return;
  std::fputs(msg, stderr);
}

namespace hl::gpu {

namespace halide {
namespace {
// Halide's parallel loops on the OpenMP team the Eigen reference and the rest of the process use, so both fork and join
// the same way: Halide's own pool puts its workers to sleep between calls, and a sleeping vCPU takes longer to wake
// than a short call lasts. Nested loops run serially inside a task (OpenMP's default of one active level).
int omp_do_par_for(void* uc, halide_task_t task, int min, int size, uint8_t* closure) {
  if (size == 1) return task(uc, min, closure);
  int rc = 0;
#pragma omp parallel for schedule(dynamic, 1) if (!omp_in_parallel())
  for (int i = min; i < min + size; ++i) {
    const int r = task(uc, i, closure);
    if (r != 0) {
#pragma omp atomic write
      rc = r;
    }
  }
  return rc;
}
}  // namespace

int cpu_threads() {
  static const int n = [] {
    const int t = std::max(1, omp_get_max_threads());
    halide_set_num_threads(t);
    if (!env_switch("HYBRIDLAB_HALIDE_OWN_POOL")) halide_set_custom_do_par_for(omp_do_par_for);
    return t;
  }();
  return n;
}
VulkanContext vulkan_context() {
  VulkanContext v;
#ifdef HYBRIDLAB_HALIDE_VULKAN
  halide_vulkan_memory_allocator* alloc = nullptr;
  VkInstance inst = VK_NULL_HANDLE;
  VkDevice dev = VK_NULL_HANDLE;
  VkPhysicalDevice pd = VK_NULL_HANDLE;
  VkQueue q = VK_NULL_HANDLE;
  uint32_t family = 0;
  VkDebugUtilsMessengerEXT m = VK_NULL_HANDLE;
  if (halide_vulkan_acquire_context(nullptr, &alloc, &inst, &dev, &pd, &q, &family, &m, false) == 0) {
    halide_vulkan_release_context(nullptr, inst, dev, q, m);
    v = {inst, dev, q, alloc != nullptr};
  }
#endif
  return v;
}
int sweep_points_built() { return HL_SWEEP_POINTS; }

}  // namespace halide

namespace {

using Halide::Runtime::Buffer;

template <class T> Buffer<T> view(const T* data, std::vector<int> dims) { return Buffer<T>(const_cast<T*>(data), dims); }
template <class T> Buffer<T> view(const Mat<T>& m, std::vector<int> dims) { return view(m.data(), std::move(dims)); }

int dim(int64_t v, const char* what) {
  if (v < 0 || v > INT32_MAX) fail("halide: {} = {} does not fit a Halide buffer dimension", what, v);
  return int(v);
}

void check(int rc, const std::string& what) {
  if (rc != 0) {
    const std::string msg = last_halide_error;
    last_halide_error.clear();
    fail("halide pipeline {} failed ({}): {}", what, rc, msg.empty() ? "no message" : msg);
  }
}

// Runs a CPU pipeline.
template <class F> void cpu_call(const std::string& what, F&& fn) {
  halide::cpu_threads();
  check(fn(), what);
}

}  // namespace
}  // namespace hl::gpu

#ifdef HYBRIDLAB_HALIDE_VULKAN
// Halide's Vulkan runtime on hybridlab's device. Halide 21 keeps one Vulkan context per process in weak globals and
// makes its own instance and device on first use (src/runtime/vulkan_context.h at v21.0.0); nothing public hands it
// another's. So the globals are seeded here, before Halide's first call, with hybridlab's instance, device and queue, its
// Vulkan entry points are loaded for them, and its memory allocator is made on that device: the layout below mirrors
// Halide 21's runtime (the wheel is pinned; tests/ops run every halide-vulkan variant through it). Buffers handed to it
// mirror its MemoryRegion (halide_vulkan.h).
namespace Halide::Runtime::Internal {
struct SystemMemoryAllocatorFns {
  void* (*allocate)(void*, size_t) = nullptr;
  void (*deallocate)(void*, void*) = nullptr;
};
namespace Vulkan {
struct VulkanMemoryConfig {
  size_t maximum_pool_size = 0, minimum_block_size = 4 * 1024, maximum_block_size = 0, maximum_block_count = 0,
         nearest_multiple = 32;
};
class VulkanMemoryAllocator {
 public:
  static VulkanMemoryAllocator* create(void* user_context, const VulkanMemoryConfig& config, VkDevice dev,
                                       VkPhysicalDevice phys_dev, const SystemMemoryAllocatorFns& system_allocator,
                                       const VkAllocationCallbacks* alloc_callbacks);
};
extern halide_vulkan_memory_allocator* cached_allocator;
extern VkInstance cached_instance;
extern VkDevice cached_device;
extern VkQueue cached_queue;
extern VkPhysicalDevice cached_physical_device;
extern uint32_t cached_queue_family_index;
extern PFN_vkDestroyDevice vkDestroyDevice;
extern PFN_vkDestroyInstance vkDestroyInstance;
void vk_load_vulkan_loader_functions(void* user_context);
void vk_load_vulkan_instance_functions(void* user_context, VkInstance instance);
void vk_load_vulkan_device_functions(void* user_context, VkDevice device);
}  // namespace Vulkan
}  // namespace Halide::Runtime::Internal
#endif

#ifdef HYBRIDLAB_HALIDE_VULKAN
// Halide's device allocations (what a pipeline stores between its kernels) come from hybridlab's buffer pool: these
// override the runtime's weak definitions. Halide 21's own region allocator sizes a region carved from a free one
// wrongly on a device with 64-byte buffer alignment (lavapipe): a 128-byte request got a 100-byte region, after a call
// of other shapes, and the pipeline's next halide_device_malloc of it replaced it with a new, cleared buffer, which
// the kernel after read as zeros (traced with Halide's debug runtime; fixed upstream after 21.0.0, Halide #9223 and
// #9224). Its allocator keeps only the kernels' scalar-argument buffers of its own path (halide.vulkan.own_dispatch = 0).
extern "C" int halide_vulkan_device_free(void* user_context, halide_buffer_t* buf);

extern "C" int halide_vulkan_device_malloc(void* user_context, halide_buffer_t* buf) {
  namespace H = hl::gpu::halide_vk;
  const size_t bytes = buf->size_in_bytes();
  if (buf->device) {
    if (reinterpret_cast<const H::Region*>(buf->device)->size >= bytes) return halide_error_code_success;
    if (const int rc = halide_vulkan_device_free(user_context, buf)) return rc;
  }
  H::State& h = H::state();
  if (!h.dev) {
    halide_error(user_context, "Halide's Vulkan runtime has no hybridlab device to allocate on");
    return halide_error_code_device_malloc_failed;
  }
  std::unique_ptr<H::Wrapped> w;
  try {
    w = std::make_unique<H::Wrapped>(h.dev->alloc(std::max<size_t>(bytes, 4)));
  } catch (const std::exception& e) {
    halide_error(user_context, e.what());
    return halide_error_code_out_of_memory;
  }
  buf->device = uint64_t(uintptr_t(&w->region));
  buf->device_interface = halide_vulkan_device_interface();
  std::lock_guard<std::mutex> lock(h.mu);
  h.regions[&w->region] = w.get();
  h.pooled[&w->region] = std::move(w);
  return halide_error_code_success;
}

extern "C" int halide_vulkan_device_free(void* user_context, halide_buffer_t* buf) {
  if (buf->device == 0) return halide_error_code_success;
  namespace H = hl::gpu::halide_vk;
  H::State& h = H::state();
  std::lock_guard<std::mutex> lock(h.mu);
  const auto it = h.pooled.find(reinterpret_cast<const void*>(buf->device));
  if (it == h.pooled.end()) {
    halide_error(user_context, "halide_vulkan_device_free: a device buffer hybridlab did not allocate");
    return halide_error_code_device_free_failed;
  }
  // The buffer goes back to the pool once nothing holds it: Halide waited for its kernels, or the kernels on
  // hybridlab's stream that use it hold it until they have run.
  h.regions.erase(it->first);
  h.pooled.erase(it);
  buf->device = 0;
  buf->device_interface = nullptr;
  return halide_error_code_success;
}
#endif

namespace hl::gpu {
namespace {

#ifdef HYBRIDLAB_HALIDE_VULKAN
VKAPI_ATTR void VKAPI_CALL keep_device(VkDevice, const VkAllocationCallbacks*) {}
VKAPI_ATTR void VKAPI_CALL keep_instance(VkInstance, const VkAllocationCallbacks*) {}

// Halide's context on hybridlab's device `d` (seeded on first use); why not, if it cannot be: Halide's runtime already
// serves another device of this process, or its allocator failed.
std::string vk_unavailable(const Device& cd) {
  namespace V = Halide::Runtime::Internal::Vulkan;
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  Device& d = const_cast<Device&>(cd);  // its context gains a teardown step
  vk::Context& c = d.ctx();
  halide_vk::State& h = halide_vk::state();
  if (h.device == c.device()) return "";
  if (h.device != VK_NULL_HANDLE)
    return "Halide's Vulkan runtime serves " + h.name + " in this process (one context per process), not " + d.info().name;
  if (V::cached_instance != VK_NULL_HANDLE) return "Halide's Vulkan runtime already made a context of its own in this process";
  V::vk_load_vulkan_loader_functions(nullptr);
  V::vk_load_vulkan_instance_functions(nullptr, c.instance());
  V::vk_load_vulkan_device_functions(nullptr, c.device());
  // Halide's own device allocations (the intermediates a schedule stores between kernels) in blocks of at least 1 MiB,
  // each rounded up to whole 256 bytes: with Halide's default rounding, attention's intermediates came back as
  // zeros/NaN on lavapipe (measured).
  V::VulkanMemoryConfig config;
  config.minimum_block_size = 1 << 20;
  config.nearest_multiple = 256;
  // Plain malloc and free, as Halide's own context uses: its runtime frees some of this memory with free() directly.
  const Halide::Runtime::Internal::SystemMemoryAllocatorFns system{[](void*, size_t n) { return std::malloc(n); },
                                                                   [](void*, void* p) { std::free(p); }};
  V::VulkanMemoryAllocator* alloc = V::VulkanMemoryAllocator::create(nullptr, config, c.device(), c.physical_device(), system, nullptr);
  if (!alloc) {
    const std::string why = "Halide's Vulkan memory allocator could not be made on " + d.info().name + ": " +
                            (last_halide_error.empty() ? "no message" : last_halide_error);
    last_halide_error.clear();
    return why;
  }
  V::cached_allocator = reinterpret_cast<halide_vulkan_memory_allocator*>(alloc);
  V::cached_instance = c.instance();
  V::cached_device = c.device();
  V::cached_physical_device = c.physical_device();
  V::cached_queue = c.queue();
  V::cached_queue_family_index = d.info().compute_queue_family;
  h.device = c.device();
  h.name = d.info().name;
  h.dev = &d;
  // Before the device goes: Halide's pipelines, shader modules and memory released through its own teardown, which
  // would also destroy the device and instance it was handed: those two calls are made no-ops first (the context is
  // hybridlab's to destroy).
  c.on_teardown([] {
    V::vkDestroyDevice = keep_device;
    V::vkDestroyInstance = keep_instance;
    halide_device_release(nullptr, halide_vulkan_device_interface());
    halide_vk::State& hv = halide_vk::state();
    std::lock_guard<std::mutex> lock(hv.mu);
    hv.device = VK_NULL_HANDLE;
    hv.name.clear();
    hv.dev = nullptr;
    for (const auto& [region, w] : hv.pooled) hv.regions.erase(region);
    hv.pooled.clear();
  });
  return "";
}
#endif

// Raw Q8_0 rows of a weight, cached (the source is kept alive by the entry; the cache is cleared past
// HYBRIDLAB_WEIGHT_CACHE_MB).
std::shared_ptr<const std::vector<uint8_t>> raw_rows(const WeightRef& w) {
  struct Entry {
    std::shared_ptr<const TensorSource> src;
    int64_t row0, rows;
    std::shared_ptr<const std::vector<uint8_t>> bytes;
  };
  static std::mutex mu;
  static std::vector<Entry> cache;
  static size_t held = 0;
  std::lock_guard<std::mutex> lock(mu);
  for (auto& e : cache)
    if (e.src == w.src && e.row0 == w.row0 && e.rows == w.rows) return e.bytes;
  auto v = std::make_shared<std::vector<uint8_t>>(quant::row_bytes(w.storage_type(), w.cols) * size_t(w.rows));
  w.read_raw_rows(0, w.rows, v->data());
  const size_t budget = env_megabytes("HYBRIDLAB_WEIGHT_CACHE_MB", 8192);
  if (held + v->size() > budget) cache.clear(), held = 0;
  cache.push_back({w.src, w.row0, w.rows, v});
  held += v->size();
  return v;
}

// ---- the ops -------------------------------------------------------------------------------------------

using NormFn = int (*)(halide_buffer_t*, halide_buffer_t*, float, halide_buffer_t*);
using AddFn = int (*)(halide_buffer_t*, halide_buffer_t*, halide_buffer_t*);
using AddNormFn = int (*)(halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, float, halide_buffer_t*,
                         halide_buffer_t*);
using RopeFn = int (*)(halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, halide_buffer_t*);
using SliceFn = int (*)(halide_buffer_t*, int32_t, int32_t, int32_t, halide_buffer_t*);
using L2NormFn = int (*)(halide_buffer_t*, float, float, halide_buffer_t*);
using GatesFn = int (*)(halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, halide_buffer_t*,
                        halide_buffer_t*);
using RouterFn = int (*)(halide_buffer_t*, int32_t, halide_buffer_t*, halide_buffer_t*);
using SharedFn = int (*)(halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, halide_buffer_t*,
                         halide_buffer_t*);
using EmbedFn = int (*)(halide_buffer_t*, halide_buffer_t*, halide_buffer_t*);
using GatedNormFn = int (*)(halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, float, halide_buffer_t*);
using MatmulFn = int (*)(halide_buffer_t*, halide_buffer_t*, halide_buffer_t*);
using PrepFn = int (*)(halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, halide_buffer_t*,
                      halide_buffer_t*, halide_buffer_t*, int32_t, float, float, halide_buffer_t*, halide_buffer_t*,
                      halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, halide_buffer_t*);
using ConvFn = int (*)(halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, halide_buffer_t*);
using ScanFn = int (*)(halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, halide_buffer_t*,
                       halide_buffer_t*, int32_t, halide_buffer_t*, halide_buffer_t*);
using AttnFn = int (*)(halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, int32_t, halide_buffer_t*);
using MoeFn = int (*)(halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, halide_buffer_t*,
                      halide_buffer_t*, halide_buffer_t*, halide_buffer_t*);

// Where a pipeline runs: the CPU, or Halide's Vulkan runtime.
enum class On { Cpu, Vulkan };


template <class T> T* host_data(const Tensor& t) {
  if constexpr (std::is_same_v<T, float>) return const_cast<float*>(t.f32().data());
  else return const_cast<int32_t*>(t.i32().data());
}

// The buffers of one pipeline call, and the call. On the CPU each tensor is viewed in its host memory (row-major
// Eigen, dimension 0 innermost, no copies). On Halide's Vulkan runtime each is hybridlab's own device buffer, handed
// to Halide as it is (wrapped, never copied): tensors stay on the device between Halide's ops and hybridlab's, and a
// call's inputs are uploaded only where the host held the newer copy, as for any Vulkan variant. The tensors stay
// alive as long as the object.
class Io {
 public:
  Io(On on, VariantCtx& c) : on_(on), c_(c) {}
  ~Io() {
#ifdef HYBRIDLAB_HALIDE_VULKAN
    for (const halide_vk::Wrapped& w : wrapped_) halide_vk::remove_region(w);
#endif
  }
  Io(const Io&) = delete;
  Io& operator=(const Io&) = delete;
  bool vulkan() const { return on_ == On::Vulkan; }

  // An input tensor (f32 or i32) as a buffer of `dims`, innermost first, indexed from `mins` (default 0). The mins are
  // set before the buffer is wrapped: Halide's Buffer drops a device allocation when its mins change.
  template <class T> Buffer<T> in(const Tensor& t, std::vector<int> dims, std::vector<int> mins = {}) {
    keep_.push_back(t);
    if (!vulkan()) {
      Buffer<T> hb = view(host_data<T>(t), std::move(dims));
      if (!mins.empty()) hb.set_min(mins);
      return hb;
    }
    return wrap<T>(t.buffer(c_.device()), std::move(dims), std::move(mins));
  }
  // A weight in f32: the store's host copy, or its resident device copy (dequantized once).
  Buffer<float> weight(const WeightRef& w, std::vector<int> dims) {
    return in<float>(vulkan() ? c_.weights->device(w) : c_.weights->host(w), std::move(dims));
  }
  // A new output tensor [rows, cols] (contents undefined) as a buffer of `dims`.
  template <class T> Buffer<T> out(Tensor& t, int64_t rows, int64_t cols, std::vector<int> dims) {
    constexpr bool f32 = std::is_same_v<T, float>;
    if (vulkan()) {
      t = Tensor::device(c_.device(), rows, cols, f32 ? Tensor::Type::F32 : Tensor::Type::I32);
      keep_.push_back(t);
      return wrap<T>(t.buffer_mut(c_.device()), std::move(dims));
    }
    if constexpr (f32) t = Tensor::from(Mat<float>(rows, cols));
    else t = Tensor::from_i32(IMat(rows, cols));
    keep_.push_back(t);
    return view(host_data<T>(t), std::move(dims));
  }

  // Runs the pipeline. On Vulkan its kernels are dispatched on hybridlab's stream (halide_vulkan.cpp), ordered by the
  // stream's barriers like any other kernel. With halide.vulkan.own_dispatch = 0 Halide's runtime submits each to the
  // queue itself and waits for it instead: hybridlab's recorded work is submitted first, and a barrier lets what
  // hybridlab records next see what they wrote; timestamps around the call (Device::time_ns) then cover Halide's
  // runtime between its kernels too.
  template <class F> void run(const std::string& what, F&& fn) {
    if (!vulkan()) return cpu_call(what, std::forward<F>(fn));
#ifdef HYBRIDLAB_HALIDE_VULKAN
    Device& d = c_.device();
    const bool own = halide_vk::own_dispatch(d);
    halide_vk::CallScope call(d, what, own);
    if (!own) d.hand_over();
    check(fn(), what);
    if (!own) d.take_back();
#endif
  }

  // Rows [row0, row0 + src.rows()) of dst become src (a KV cache append), where the data is.
  void write_rows(Tensor& dst, int64_t row0, const Tensor& src) {
    if (src.cols() != dst.cols() || row0 < 0 || row0 + src.rows() > dst.rows())
      fail("halide: rows [{}, {}) of width {} do not fit [{}, {}]", row0, row0 + src.rows(), src.cols(), dst.rows(), dst.cols());
    if (!vulkan()) {
      dst.f32_mut().middleRows(row0, src.rows()) = src.f32();
      return;
    }
    Device& d = c_.device();
    if (src.numel()) d.copy(src.buffer(d), dst.buffer_mut(d), src.bytes(), 0, size_t(row0 * dst.cols()) * 4);
  }
  // A CPU state updated in place: its host memory viewed as a buffer of `dims`, for a pipeline that reads every
  // element before it writes it (the input and the output buffer of the same memory; not on Vulkan).
  Buffer<float> state_in_place(Tensor& state, std::vector<int> dims) {
    if (vulkan()) fail("halide: a state updated in place is CPU only");
    keep_.push_back(state);
    return view(state.f32_mut().data(), std::move(dims));
  }
  // A state becomes the pipeline's new state (a separate output: Halide's inputs and outputs do not alias).
  void update_state(Tensor& state, const Tensor& next) {
    if (!vulkan()) {
      state.f32_mut() = next.f32();
      return;
    }
    Device& d = c_.device();
    d.copy(next.buffer(d), state.buffer_mut(d), state.bytes());
  }

 private:
  template <class T> Buffer<T> wrap(const BufferPtr& b, std::vector<int> dims, std::vector<int> mins = {}) {
    Buffer<T> hb(static_cast<T*>(nullptr), dims);
    if (!mins.empty()) hb.set_min(mins);
#ifdef HYBRIDLAB_HALIDE_VULKAN
    if (hb.number_of_elements() == 0) return hb;  // never handed to a pipeline
    if (hb.size_in_bytes() > b->size()) fail("halide: a buffer of {} bytes viewed as {} bytes", b->size(), hb.size_in_bytes());
    const halide_vk::Wrapped& w = wrapped_.emplace_back(b);
    halide_vk::add_region(w);  // the kernels on hybridlab's stream find the buffer behind the region
    check(hb.device_wrap_native(halide_vulkan_device_interface(), uint64_t(uintptr_t(&w.region))), "wrapping a device buffer");
#else
    (void)b;
    fail("halide: built without the Vulkan schedules");
#endif
    return hb;
  }

  On on_;
  VariantCtx& c_;
  std::vector<Tensor> keep_;
#ifdef HYBRIDLAB_HALIDE_VULKAN
  std::deque<halide_vk::Wrapped> wrapped_;  // a deque: the regions Halide holds pointers to never move
#endif
};

std::function<void(VariantCtx&, OpArgs&)> residual_add(AddFn fn, On on, std::string what) {
  return [=](VariantCtx& c, OpArgs& a) {
    const Tensor &x = a.in("a"), &x2 = a.in("b");
    if (x.rows() != x2.rows() || x.cols() != x2.cols())
      fail("add: a [{}, {}] and b [{}, {}] differ", x.rows(), x.cols(), x2.rows(), x2.cols());
    Io io(on, c);
    const int C = dim(x.cols(), "columns"), R = dim(x.rows(), "rows");
    Tensor y;
    auto ab = io.in<float>(x, {C, R}), bb = io.in<float>(x2, {C, R}), yb = io.out<float>(y, R, C, {C, R});
    if (y.numel()) io.run(what, [&] { return fn(ab, bb, yb); });
    a.set("y", y);
  };
}

// `two` (a build with two=true) with a second addend b; else `one`, handed a again as b (not read).
std::function<void(VariantCtx&, OpArgs&)> add_rmsnorm(AddNormFn one, AddNormFn two, On on, std::string what) {
  return [=](VariantCtx& c, OpArgs& a) {
    const Tensor &x = a.in("x"), &x1 = a.in("a");
    const bool has_b = a.t.count("b") > 0;
    const Tensor& x2 = has_b ? a.in("b") : x1;
    const WeightRef& gain = a.weight("gain");
    const int64_t G = gain.numel();
    if (x1.rows() != x.rows() || x1.cols() != x.cols() || x2.rows() != x.rows() || x2.cols() != x.cols())
      fail("add_rmsnorm: x [{}, {}], a [{}, {}], b [{}, {}] differ", x.rows(), x.cols(), x1.rows(), x1.cols(), x2.rows(),
           x2.cols());
    if (G == 0 || x.cols() % G) fail("add_rmsnorm: {} columns are not a multiple of the gain length {}", x.cols(), G);
    Io io(on, c);
    const int rows = dim(x.numel() / G, "rows"), iG = int(G);
    Tensor y, n;
    auto xb = io.in<float>(x, {iG, rows}), ab = io.in<float>(x1, {iG, rows}), bb = io.in<float>(x2, {iG, rows});
    auto gb = io.weight(gain, {iG}), yb = io.out<float>(y, x.rows(), x.cols(), {iG, rows});
    auto nb = io.out<float>(n, x.rows(), x.cols(), {iG, rows});
    const AddNormFn fn = has_b ? two : one;
    if (y.numel()) io.run(what + (has_b ? "_two" : ""), [&] { return fn(xb, ab, bb, gb, float(a.param("eps")), yb, nb); });
    a.set("y", y);
    a.set("n", n);
  };
}

// The cosines and sines of rope's angles at positions [p0, p0 + rows), [rows, half], formed on the host in double as the
// reference's.
std::pair<Mat<float>, Mat<float>> rope_angles(double theta, int64_t R, int64_t p0, int64_t rows) {
  const int64_t half = R / 2;
  Mat<float> cs(rows, half), sn(rows, half);
  std::vector<double> inv_freq(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) inv_freq[size_t(i)] = std::pow(theta, -2.0 * double(i) / double(R));
  for (int64_t t = 0; t < rows; ++t)
    for (int64_t i = 0; i < half; ++i) {
      const double ang = double(p0 + t) * inv_freq[size_t(i)];
      cs(t, i) = float(std::cos(ang));
      sn(t, i) = float(std::sin(ang));
    }
  return {std::move(cs), std::move(sn)};
}

// The pipeline rotates by cosines and sines per (token, pair) formed on the host in double, as the reference's. On the
// CPU they are formed for the call's positions. On Vulkan the weight store keeps them on the device, uploaded once, and
// the call's buffers are those tables translated by pos0 (Halide indexes them from -pos0), so a step uploads nothing:
// positions [0, rows) (rows a power of two past the call's last position, up to kRopeTablePositions), or past them one
// window of kRopeTablePositions from a multiple of half of it, replaced when a call's positions leave it (once per
// half window of decode steps). Only a chunk longer than half a window forms its own and uploads them.
constexpr int64_t kRopeTablePositions = 65536;
std::function<void(VariantCtx&, OpArgs&)> rope(RopeFn fn, On on, std::string what) {
  return [=](VariantCtx& c, OpArgs& a) {
    const Tensor& x = a.in("x");
    const int64_t D = a.iparam("head_dim"), R = a.iparam("rot_dims"), pos0 = a.iparam("pos0");
    if (D <= 0 || x.cols() % D || R < 0 || R % 2 || R > D)
      fail("rope: {} columns, head dim {}, rotary dims {} are inconsistent", x.cols(), D, R);
    const int64_t half = R / 2;
    if (half == 0 || x.numel() == 0) {  // nothing rotates
      a.set("y", x.clone());
      return;
    }
    const double theta = a.param("theta");
    if (pos0 < 0 || pos0 > (int64_t(1) << 30)) fail("rope: position {} is outside [0, 2^30]", pos0);
    Io io(on, c);
    const int T = dim(x.rows(), "tokens"), H = dim(x.cols() / D, "heads"), iD = dim(D, "head dim"), ih = dim(half, "pairs");
    Tensor y, ct, st;
    int64_t first = pos0, rows = T;  // the tables' first position and rows
    const auto kept = [&](const std::string& key, const std::string& version) {
      std::optional<std::pair<Mat<float>, Mat<float>>> made;  // formed once for both tables, only when one is made
      const auto part = [&](bool sine) {
        if (!made) made = rope_angles(theta, R, first, rows);
        return Tensor::from(sine ? made->second : made->first);
      };
      ct = c.weights->constant(key + ".cos", [&] { return part(false); }, version);
      st = c.weights->constant(key + ".sin", [&] { return part(true); }, version);
    };
    constexpr int64_t kHalfWindow = kRopeTablePositions / 2;
    if (io.vulkan() && pos0 + T <= kRopeTablePositions) {
      first = 0, rows = std::max<int64_t>(64, int64_t(std::bit_ceil(uint64_t(pos0 + T))));
      kept(fmt::format("halide.rope.{}.{}.{}", theta, R, rows), "");
    } else if (io.vulkan() && T <= kHalfWindow) {
      first = pos0 / kHalfWindow * kHalfWindow, rows = kRopeTablePositions;  // pos0 + T <= first + rows
      kept(fmt::format("halide.rope.{}.{}.window", theta, R), std::to_string(first));
    } else {
      auto [cs, sn] = rope_angles(theta, R, pos0, T);
      ct = Tensor::from(std::move(cs)), st = Tensor::from(std::move(sn));
    }
    // Token t reads position pos0 + t: the tables indexed from first - pos0.
    const std::vector<int> table{ih, dim(rows, "positions")}, mins{0, int(first - pos0)};
    auto xb = io.in<float>(x, {iD, H, T}), cb = io.in<float>(ct, table, mins), sb = io.in<float>(st, table, mins);
    auto yb = io.out<float>(y, T, x.cols(), {iD, H, T});
    io.run(what, [&] { return fn(xb, cb, sb, yb); });
    a.set("y", y);
  };
}

std::function<void(VariantCtx&, OpArgs&)> slice(SliceFn fn, On on, std::string what) {
  return [=](VariantCtx& c, OpArgs& a) {
    const Tensor& x = a.in("x");
    const int64_t period = a.iparam("period"), offset = a.iparam("offset"), width = a.iparam("width");
    if (period <= 0 || x.cols() % period || offset < 0 || width < 0 || offset + width > period)
      fail("slice: columns [{}, {}) of blocks of {} do not fit {} columns", offset, offset + width, period, x.cols());
    Io io(on, c);
    const int T = dim(x.rows(), "rows"), Y = dim(x.cols() / period * width, "columns");
    Tensor y;
    auto xb = io.in<float>(x, {dim(x.cols(), "columns"), T}), yb = io.out<float>(y, T, Y, {Y, T});
    if (y.numel()) io.run(what, [&] { return fn(xb, int(period), int(offset), int(width), yb); });
    a.set("y", y);
  };
}

std::function<void(VariantCtx&, OpArgs&)> l2norm(L2NormFn fn, On on, std::string what) {
  return [=](VariantCtx& c, OpArgs& a) {
    const Tensor& x = a.in("x");
    const int64_t D = a.iparam("head_dim");
    if (D <= 0 || x.cols() % D) fail("l2norm: {} columns are not a multiple of the head dim {}", x.cols(), D);
    Io io(on, c);
    const int rows = dim(x.numel() / D, "rows");
    Tensor y;
    auto xb = io.in<float>(x, {int(D), rows}), yb = io.out<float>(y, x.rows(), x.cols(), {int(D), rows});
    if (y.numel()) io.run(what, [&] { return fn(xb, float(a.param("scale")), float(a.param("eps")), yb); });
    a.set("y", y);
  };
}

std::function<void(VariantCtx&, OpArgs&)> ssm_gates(GatesFn fn, On on, std::string what) {
  return [=](VariantCtx& c, OpArgs& a) {
    const Tensor &b = a.in("b"), &av = a.in("a");
    const WeightRef &A = a.weight("A"), &dt = a.weight("dt_bias");
    const int64_t nv = A.numel();
    if (b.cols() != nv || av.cols() != nv || dt.numel() != nv || av.rows() != b.rows())
      fail("ssm_gates: b [{}, {}], a [{}, {}], A [{}], dt_bias [{}] are inconsistent", b.rows(), b.cols(), av.rows(),
           av.cols(), nv, dt.numel());
    Io io(on, c);
    const int T = dim(b.rows(), "tokens"), n = dim(nv, "heads");
    Tensor beta, g;
    auto bb = io.in<float>(b, {n, T}), ab = io.in<float>(av, {n, T}), Ab = io.weight(A, {n}), db = io.weight(dt, {n});
    auto betab = io.out<float>(beta, T, n, {n, T}), gb = io.out<float>(g, T, n, {n, T});
    if (beta.numel()) io.run(what, [&] { return fn(bb, ab, Ab, db, betab, gb); });
    a.set("beta", beta);
    a.set("g", g);
  };
}

std::function<void(VariantCtx&, OpArgs&)> moe_router(RouterFn fn, On on, std::string what) {
  return [=](VariantCtx& c, OpArgs& a) {
    const Tensor& l = a.in("logits");
    const int64_t k = a.iparam("k");
    if (k <= 0 || k > l.cols()) fail("moe_router: top-{} of {} experts", k, l.cols());
    Io io(on, c);
    const int T = dim(l.rows(), "tokens"), E = dim(l.cols(), "experts"), K = dim(k, "slots");
    Tensor expert, weight;
    auto lb = io.in<float>(l, {E, T});
    auto eb = io.out<int32_t>(expert, T, K, {K, T});
    auto wb = io.out<float>(weight, T, K, {K, T});
    if (T > 0) io.run(what, [&] { return fn(lb, K, eb, wb); });
    a.set("expert", expert);
    a.set("weight", weight);
  };
}

// The whole table in f32 (the store's host copy, or its resident device copy). The ids are checked first, on the host,
// as the reference does (on Vulkan that reads them back when they are on the device: T values).
std::function<void(VariantCtx&, OpArgs&)> embed(EmbedFn fn, On on, std::string what) {
  return [=](VariantCtx& c, OpArgs& a) {
    const Tensor& tok = a.in("tokens");
    if (tok.type() != Tensor::Type::I32 || tok.rows() != 1) fail("embed: tokens must be i32 [1, T]");
    const WeightRef& tw = a.weight("table");
    const IMat& ids = tok.i32();
    for (int64_t t = 0; t < ids.size(); ++t)
      if (ids(0, t) < 0 || ids(0, t) >= tw.rows)
        fail("token id {} at position {} is outside the vocabulary [0, {})", ids(0, t), t, tw.rows);
    Io io(on, c);
    const int T = dim(ids.size(), "tokens"), H = dim(tw.cols, "hidden"), V = dim(tw.rows, "vocabulary");
    Tensor y;
    auto ib = io.in<int32_t>(tok, {T});
    auto tb = io.weight(tw, {H, V}), yb = io.out<float>(y, T, H, {H, T});
    if (T > 0) io.run(what, [&] { return fn(ib, tb, yb); });
    a.set("y", y);
  };
}

// f32 weights, as the f32 matmul's.
std::function<void(VariantCtx&, OpArgs&)> shared_expert(SharedFn fn, On on, std::string what) {
  return [=](VariantCtx& c, OpArgs& a) {
    const Tensor& x = a.in("x");
    const WeightRef &g = a.weight("gate"), &u = a.weight("up"), &d = a.weight("down"), &gw = a.weight("gate_w");
    const int64_t H = x.cols(), F = g.rows;
    if (g.cols != H || u.rows != F || u.cols != H || d.rows != H || d.cols != F || gw.numel() != H)
      fail("shared_expert: x [{}, {}] does not fit gate [{}, {}], up [{}, {}], down [{}, {}], gate_w [{}]", x.rows(), H,
           g.rows, g.cols, u.rows, u.cols, d.rows, d.cols, gw.numel());
    Io io(on, c);
    const int T = dim(x.rows(), "tokens"), iH = dim(H, "hidden"), iF = dim(F, "width");
    Tensor y;
    auto xb = io.in<float>(x, {iH, T}), gb = io.weight(g, {iH, iF}), ub = io.weight(u, {iH, iF}), db = io.weight(d, {iF, iH});
    auto wb = io.weight(gw, {iH}), yb = io.out<float>(y, T, H, {iH, T});
    if (T > 0) io.run(what, [&] { return fn(xb, gb, ub, db, wb, yb); });
    a.set("y", y);
  };
}

std::function<void(VariantCtx&, OpArgs&)> rmsnorm(NormFn fn, On on, std::string what) {
  return [=](VariantCtx& c, OpArgs& a) {
    const Tensor& x = a.in("x");
    const WeightRef& gain = a.weight("gain");
    const int64_t G = gain.numel();
    if (G == 0 || x.cols() % G) fail("rmsnorm: {} columns are not a multiple of the gain length {}", x.cols(), G);
    Io io(on, c);
    const int rows = dim(x.numel() / G, "rows");
    Tensor y;
    auto xb = io.in<float>(x, {int(G), rows}), gb = io.weight(gain, {int(G)}), yb = io.out<float>(y, x.rows(), x.cols(), {int(G), rows});
    if (y.numel()) io.run(what, [&] { return fn(xb, gb, float(a.param("eps")), yb); });
    a.set("y", y);
  };
}

std::function<void(VariantCtx&, OpArgs&)> gated_rmsnorm(GatedNormFn fn, On on, std::string what) {
  return [=](VariantCtx& c, OpArgs& a) {
    const Tensor &o = a.in("o"), &z = a.in("z");
    const WeightRef& gain = a.weight("gain");
    const int64_t G = gain.numel();
    if (o.rows() != z.rows() || o.cols() != z.cols())
      fail("gated_rmsnorm: o [{}, {}] and z [{}, {}] differ", o.rows(), o.cols(), z.rows(), z.cols());
    if (G == 0 || o.cols() % G) fail("gated_rmsnorm: {} columns are not a multiple of the gain length {}", o.cols(), G);
    Io io(on, c);
    const int rows = dim(o.numel() / G, "rows");
    Tensor y;
    auto ob = io.in<float>(o, {int(G), rows}), zb = io.in<float>(z, {int(G), rows}), gb = io.weight(gain, {int(G)});
    auto yb = io.out<float>(y, o.rows(), o.cols(), {int(G), rows});
    if (y.numel()) io.run(what, [&] { return fn(ob, zb, gb, float(a.param("eps")), yb); });
    a.set("y", y);
  };
}

// f32 weights through `fn`; Q8_0 weights through `q8` (decoded in the pipeline, CPU) when there is one; other
// storage types dequantized to f32 first (once: the store's copy).
// `one_fn`, when given, serves calls of one token (f32 weights).
std::function<void(VariantCtx&, OpArgs&)> matmul(MatmulFn fn, MatmulFn q8, On on, std::string what, MatmulFn one_fn = nullptr) {
  return [=](VariantCtx& c, OpArgs& a) {
    const Tensor& x = a.in("x");
    const WeightRef& w = a.weight("w");
    if (x.cols() != w.cols) fail("matmul: input has {} columns but the weight expects {}", x.cols(), w.cols);
    Io io(on, c);
    const int K = dim(x.cols(), "in"), T = dim(x.rows(), "T"), O = dim(w.rows, "out");
    Tensor y;
    auto xb = io.in<float>(x, {K, T});
    auto yb = io.out<float>(y, T, O, {O, T});
    if (q8 && !io.vulkan() && w.storage_type() == quant::Type::Q8_0) {
      const auto raw = raw_rows(w);
      auto wb = view(raw->data(), {34, K / 32, O});
      io.run(what + " (q8_0)", [&] { return q8(xb, wb, yb); });
    } else {
      auto wb = io.weight(w, {K, O});
      const MatmulFn f = one_fn && T == 1 ? one_fn : fn;
      io.run(what, [&] { return f(xb, wb, yb); });
    }
    a.set("y", y);
  };
}

std::function<void(VariantCtx&, OpArgs&)> ssm_conv(ConvFn fn, On on, std::string what) {
  return [=](VariantCtx& c, OpArgs& a) {
    const Tensor& x = a.in("x");
    const WeightRef& w = a.weight("w");
    Tensor& state = a.state("state");
    const int64_t T = x.rows(), C = x.cols(), K = w.cols;
    if (w.rows != C || K < 2 || state.rows() != K - 1 || state.cols() != C)
      fail("ssm_conv: x [{}, {}], w [{}, {}], state [{}, {}] are inconsistent", T, C, w.rows, K, state.rows(), state.cols());
    Io io(on, c);
    Tensor y, next;
    auto xb = io.in<float>(x, {int(C), dim(T, "T")}), wb = io.weight(w, {int(K), int(C)});
    auto yb = io.out<float>(y, T, C, {int(C), int(T)});
    if (!io.vulkan()) {
      // On the CPU the state is updated in place: the pipeline computes y before its new state, whose row i reads only
      // rows past i (or x), in order.
      auto st = io.state_in_place(state, {int(C), int(K - 1)});
      io.run(what, [&] { return fn(xb, wb, st, yb, st); });
    } else {
      auto sb = io.in<float>(state, {int(C), int(K - 1)}), ob = io.out<float>(next, K - 1, C, {int(C), int(K - 1)});
      io.run(what, [&] { return fn(xb, wb, sb, yb, ob); });
      io.update_state(state, next);
    }
    a.set("y", y);
  };
}

std::function<void(VariantCtx&, OpArgs&)> gdn_prep(PrepFn fn, On on, std::string what) {
  return [=](VariantCtx& c, OpArgs& a) {
    const Tensor &x = a.in("x"), &b = a.in("b"), &av = a.in("a");
    const WeightRef &w = a.weight("w"), &A = a.weight("A"), &dt = a.weight("dt_bias");
    Tensor& state = a.state("state");
    const int64_t T = x.rows(), C = x.cols(), K = w.cols, nk = a.iparam("n_k_heads"), dk = a.iparam("head_dim");
    const int64_t kd = nk * dk, nv = A.numel();
    if (nk <= 0 || dk <= 0 || 2 * kd >= C) fail("gdn_prep: {} key heads of {} leave no value channels of {}", nk, dk, C);
    if (w.rows != C || K < 2 || state.rows() != K - 1 || state.cols() != C || b.rows() != T || av.rows() != T ||
        b.cols() != nv || av.cols() != nv || dt.numel() != nv)
      fail("gdn_prep: x [{}, {}], w [{}, {}], state [{}, {}], b [{}, {}], a [{}, {}], A [{}], dt_bias [{}] are inconsistent",
           T, C, w.rows, w.cols, state.rows(), state.cols(), b.rows(), b.cols(), av.rows(), av.cols(), nv, dt.numel());
    Io io(on, c);
    const int iT = dim(T, "T"), iC = dim(C, "channels"), iK = dim(K, "taps"), ikd = dim(kd, "key channels"), inv = dim(nv, "heads");
    const int iV = iC - 2 * ikd;
    Tensor q, k, v, beta, g, next;
    auto xb = io.in<float>(x, {iC, iT}), bb = io.in<float>(b, {inv, iT}), ab = io.in<float>(av, {inv, iT});
    auto wb = io.weight(w, {iK, iC}), Ab = io.weight(A, {inv}), db = io.weight(dt, {inv});
    const std::vector<int> heads{dim(dk, "head dim"), dim(nk, "key heads"), iT};
    auto qb = io.out<float>(q, T, kd, heads), kb = io.out<float>(k, T, kd, heads), vb = io.out<float>(v, T, iV, {iV, iT});
    auto betab = io.out<float>(beta, T, nv, {inv, iT}), gb = io.out<float>(g, T, nv, {inv, iT});
    if (T > 0) {
      const auto call = [&](Buffer<float>& in, Buffer<float>& out) {
        io.run(what, [&] {
          return fn(xb, bb, ab, wb, Ab, db, in, int32_t(dk), float(a.param("scale")), float(a.param("eps")), qb, kb, vb, betab, gb, out);
        });
      };
      if (!io.vulkan()) {
        // On the CPU the state is updated in place: the pipeline computes the conv before the new state, whose row i
        // reads only rows past i (or x), each channel's rows in order.
        auto st = io.state_in_place(state, {iC, iK - 1});
        call(st, st);
      } else {
        auto sb = io.in<float>(state, {iC, iK - 1}), nb = io.out<float>(next, K - 1, C, {iC, iK - 1});
        call(sb, nb);
        io.update_state(state, next);
      }
    }
    for (auto [n, t] : {std::pair{"q", &q}, {"k", &k}, {"v", &v}, {"beta", &beta}, {"g", &g}}) a.set(n, *t);
  };
}

// Chunk size of the Vulkan ssm_scan schedules (ops/ssm_scan/halide.cmake).
constexpr int64_t kGpuScanChunk = 64;

// ssm_scan's shapes (T, n_k, n_v, d_k, d_v), checked against each other.
std::array<int64_t, 5> scan_shape(OpArgs& a) {
  const Tensor &q = a.in("q"), &k = a.in("k"), &v = a.in("v"), &b = a.in("beta"), &g = a.in("g");
  const Tensor& state = a.state("state");
  const int64_t nk = a.iparam("n_k_heads"), T = q.rows(), nv = b.cols();
  const int64_t dk = nk > 0 ? q.cols() / nk : 0, dv = nv > 0 ? v.cols() / nv : 0;
  const bool ok = nk > 0 && nv > 0 && nv % nk == 0 && q.cols() == nk * dk && k.cols() == q.cols() && v.cols() == nv * dv &&
                  k.rows() == T && v.rows() == T && b.rows() == T && g.rows() == T && g.cols() == nv &&
                  state.rows() == nv && state.cols() == dk * dv;
  if (!ok)
    fail("ssm_scan: q [{}, {}], k [{}, {}], v [{}, {}], beta [{}, {}], g [{}, {}], state [{}, {}] do not fit {} key heads",
         q.rows(), q.cols(), k.rows(), k.cols(), v.rows(), v.cols(), b.rows(), b.cols(), g.rows(), g.cols(), state.rows(),
         state.cols(), nk);
  return {T, nk, nv, dk, dv};
}

// `short_fn` (a build with shorter chunks), when given, serves calls of at most `short_t` tokens (short prompt
// chunks), where padding to a long chunk would waste most of the work; `one_fn` (the recurrent form's one step), one
// token (decode).
std::function<void(VariantCtx&, OpArgs&)> ssm_scan(ScanFn fn, On on, std::string what, ScanFn short_fn = nullptr,
                                                   int64_t short_t = 0, ScanFn one_fn = nullptr) {
  return [=](VariantCtx& c, OpArgs& a) {
    const Tensor &q = a.in("q"), &k = a.in("k"), &v = a.in("v"), &b = a.in("beta"), &g = a.in("g");
    Tensor& state = a.state("state");
    const auto [T, nk, nv, dk, dv] = scan_shape(a);
    // The Vulkan schedules' state pass runs all chunks in one thread per value column, about
    // chunks x (2 C + 1) x d_k loop iterations; lavapipe (Mesa 22.3) silently ends an invocation's loops
    // after 65535 in all, so refuse what would pass that there rather than return garbage.
    const int64_t pass = (T + kGpuScanChunk - 1) / kGpuScanChunk * (2 * kGpuScanChunk + 1) * dk;
    if (on == On::Vulkan && c.dev && c.dev->info().driver_id == VK_DRIVER_ID_MESA_LLVMPIPE && pass > 60000)
      fail("ssm_scan: {} tokens with d_k = {} would run ~{} loop iterations per invocation, past lavapipe's limit of 65535",
           T, dk, pass);
    const int tiled = a.p.count("tiled") && a.param("tiled") != 0 ? 1 : 0;
    Io io(on, c);
    const int iT = dim(T, "T");
    Tensor o, next;
    auto qb = io.in<float>(q, {int(dk), int(nk), iT}), kb = io.in<float>(k, {int(dk), int(nk), iT});
    auto vb = io.in<float>(v, {int(dv), int(nv), iT}), bb = io.in<float>(b, {int(nv), iT}), gb = io.in<float>(g, {int(nv), iT});
    auto ob = io.out<float>(o, T, nv * dv, {int(dv), int(nv), iT});
    if (one_fn && T == 1 && !io.vulkan()) {  // the step reads each state element before it writes it: in place
      auto st = io.state_in_place(state, {int(dv), int(dk), int(nv)});
      io.run(what, [&] { return one_fn(qb, kb, vb, bb, gb, st, tiled, ob, st); });
      a.set("o", o);
      return;
    }
    auto sb = io.in<float>(state, {int(dv), int(dk), int(nv)}), nb = io.out<float>(next, nv, dk * dv, {int(dv), int(dk), int(nv)});
    const ScanFn f = one_fn && T == 1 ? one_fn : short_fn && T <= short_t ? short_fn : fn;
    io.run(what, [&] { return f(qb, kb, vb, bb, gb, sb, tiled, ob, nb); });
    io.update_state(state, next);
    a.set("o", o);
  };
}

// Tokens per call of the hl_ssm_scan_chunk builds (ops/ssm_scan/halide.cmake: their `chunk`).
constexpr int64_t kCpuScanChunk = 16;

// The chunked form one chunk per call (CPU only): chunk_fn takes at most kCpuScanChunk tokens and updates the state in
// place; the chunks are walked here, in order, on views of the inputs and the output (no copies). One token: the
// recurrent form's step.
std::function<void(VariantCtx&, OpArgs&)> ssm_scan_chunks(ScanFn chunk_fn, On on, std::string what) {
  if (on != On::Cpu) fail("halide: {} is a CPU build", what);
  const int64_t C = kCpuScanChunk;
  const ScanFn one_fn = hl_ssm_scan_step_tuned;
  return [=](VariantCtx& c, OpArgs& a) {
    const Tensor &q = a.in("q"), &k = a.in("k"), &v = a.in("v"), &b = a.in("beta"), &g = a.in("g");
    Tensor& state = a.state("state");
    const auto [T, nk, nv, dk, dv] = scan_shape(a);
    const int tiled = a.p.count("tiled") && a.param("tiled") != 0 ? 1 : 0;
    Io io(On::Cpu, c);
    const int iT = dim(T, "T");
    Tensor o;
    auto qb = io.in<float>(q, {int(dk), int(nk), iT}), kb = io.in<float>(k, {int(dk), int(nk), iT});
    auto vb = io.in<float>(v, {int(dv), int(nv), iT}), bb = io.in<float>(b, {int(nv), iT}), gb = io.in<float>(g, {int(nv), iT});
    auto ob = io.out<float>(o, T, nv * dv, {int(dv), int(nv), iT});
    auto st = io.state_in_place(state, {int(dv), int(dk), int(nv)});
    if (T == 1) {
      io.run(what, [&] { return one_fn(qb, kb, vb, bb, gb, st, tiled, ob, st); });
    } else {
      // rows [t0, t0 + n) of a buffer whose last dimension is the token, indexed from 0
      auto rows = [](const Buffer<float>& x, int t0, int n) {
        Buffer<float> y = x.cropped(x.dimensions() - 1, t0, n);
        y.translate(x.dimensions() - 1, -t0);
        return y;
      };
      for (int t0 = 0; t0 < iT; t0 += int(C)) {
        const int n = int(std::min<int64_t>(C, T - t0));
        auto qc = rows(qb, t0, n), kc = rows(kb, t0, n), vc = rows(vb, t0, n), bc = rows(bb, t0, n), gc = rows(gb, t0, n);
        auto oc = rows(ob, t0, n);
        io.run(what, [&] { return chunk_fn(qc, kc, vc, bc, gc, st, tiled, oc, st); });
      }
    }
    a.set("o", o);
  };
}

// blocked_fn (with block_t): the build for prompts of whole block_t-token tiles; one_fn: the build for one token.
std::function<void(VariantCtx&, OpArgs&)> attention(AttnFn fn, On on, std::string what, AttnFn blocked_fn = nullptr,
                                                     int64_t block_t = 0, AttnFn one_fn = nullptr) {
  return [=](VariantCtx& c, OpArgs& a) {
    const Tensor &q = a.in("q"), &k = a.in("k"), &v = a.in("v"), &gate = a.in("gate");
    const int64_t nq = a.iparam("n_q_heads"), nkv = a.iparam("n_kv_heads"), len = a.iparam("kv_len"), T = q.rows();
    if (nq <= 0 || nkv <= 0 || nq % nkv || q.cols() % nq)
      fail("attention: {} query columns do not fit {} q / {} kv heads", q.cols(), nq, nkv);
    const int64_t D = q.cols() / nq;
    if (k.cols() != nkv * D || v.cols() != k.cols() || gate.cols() != q.cols() || k.rows() != T || v.rows() != T ||
        gate.rows() != T)
      fail("attention: shapes q [{}, {}], k [{}, {}], v [{}, {}], gate [{}, {}] do not fit {} q / {} kv heads", q.rows(),
           q.cols(), k.rows(), k.cols(), v.rows(), v.cols(), gate.rows(), gate.cols(), nq, nkv);
    Tensor &kc = a.state("k_cache"), &vc = a.state("v_cache");
    if (len < 0 || kc.rows() < len + T || vc.rows() < len + T || kc.cols() != k.cols() || vc.cols() != k.cols())
      fail("attention: KV cache [{}, {}] cannot take rows [{}, {}) of width {}", kc.rows(), kc.cols(), len, len + T, k.cols());
    Io io(on, c);
    io.write_rows(kc, len, k);
    io.write_rows(vc, len, v);
    const int iT = dim(T, "T"), L = dim(len + T, "kv rows");
    Tensor o;
    auto qb = io.in<float>(q, {int(D), int(nq), iT}), gb = io.in<float>(gate, {int(D), int(nq), iT});
    auto kb = io.in<float>(kc, {int(D), int(nkv), L}), vb = io.in<float>(vc, {int(D), int(nkv), L});
    auto ob = io.out<float>(o, T, q.cols(), {int(D), int(nq), iT});
    const AttnFn f = one_fn && T == 1 ? one_fn : blocked_fn && block_t > 0 && T % block_t == 0 ? blocked_fn : fn;
    io.run(what, [&] { return f(qb, kb, vb, gb, int32_t(len), ob); });
    a.set("o", o);
  };
}

// On the CPU the (token, slot) pairs are packed by expert on the host (rows of one expert together, so a task's rows
// share weights); the pipeline computes the experts over the packed rows and the weighted slot sum. On Vulkan the
// routes stay where they are: the pipeline (built with packed=false) takes row t*k + j as slot j of token t, its
// expert read from the routes on the device, and never reads ids back (it clamps them instead of checking them).
// `tiled`: builds on row tiles of P rows of one expert, by P; each expert's rows are then padded to whole tiles (copies
// of its last row, which no slot reads). The largest P whose padding adds at most a quarter to the rows, and of which
// the routed experts average at least two tiles, is taken.
struct MoeTiled {
  int rows;
  MoeFn fn;
};
std::function<void(VariantCtx&, OpArgs&)> moe_experts(MoeFn fn, On on, std::string what, std::vector<MoeTiled> tiled = {}) {
  return [=](VariantCtx& c, OpArgs& a) {
    const Tensor &x = a.in("x"), &expert = a.in("expert"), &weight = a.in("weight");
    const int64_t E = a.iparam("n_experts"), T = x.rows(), H = x.cols(), k = expert.cols();
    if (expert.type() != Tensor::Type::I32 || expert.rows() != T || weight.rows() != T || weight.cols() != k)
      fail("moe_experts: routes [{}, {}] do not match {} tokens", expert.rows(), k, T);
    const WeightRef &wg = a.weight("gate"), &wu = a.weight("up"), &wd = a.weight("down");
    if (E <= 0 || wg.rows % E || wd.rows != E * H || wg.cols != H || wu.rows != wg.rows || wu.cols != H)
      fail("moe_experts: x [{}, {}] does not fit {} experts gate [{}, {}], up [{}, {}], down [{}, {}]", T, H, E, wg.rows,
           wg.cols, wu.rows, wu.cols, wd.rows, wd.cols);
    const int64_t F = wg.rows / E, R = T * k;
    const int iR = dim(R, "rows"), iH = dim(H, "H"), iF = dim(F, "F"), iT = dim(T, "T"), ik = dim(k, "k");
    Io io(on, c);
    Tensor y;
    auto gb = io.weight(wg, {iH, dim(E * F, "E*F")}), ub = io.weight(wu, {iH, int(E * F)}), db = io.weight(wd, {iF, dim(E * H, "E*H")});
    auto wb = io.in<float>(weight, {ik, iT}), yb = io.out<float>(y, T, H, {iH, iT});
    if (io.vulkan()) {
      auto xb = io.in<float>(x, {iH, iT});
      auto eb = io.in<int32_t>(expert, {iR}), pb = io.in<int32_t>(expert, {ik, iT});  // pos: not read (packed=false)
      if (T > 0) io.run(what, [&] { return fn(xb, eb, gb, ub, db, pb, wb, yb); });
      a.set("y", y);
      return;
    }
    // Pack: rows of expert 0, then 1, ...; (token, slot) order within an expert; each expert's rows from a whole tile.
    const IMat& ex = expert.i32();
    const Mat<float>& xm = x.f32();
    std::vector<int64_t> count(size_t(E), 0);
    for (int64_t i = 0; i < ex.size(); ++i) {
      const int e = ex.data()[i];
      if (e < 0 || e >= E) fail("moe_experts: expert id {} outside [0, {})", e, E);
      ++count[size_t(e)];
    }
    const auto padded = [&](int64_t P) {
      int64_t n = 0;
      for (int64_t c : count) n += (c + P - 1) / P * P;
      return n;
    };
    // A tile build only where the routed experts average at least two of its tiles (fewer rows: the one-row build won).
    const int64_t used = std::count_if(count.begin(), count.end(), [](int64_t c) { return c > 0; });
    MoeFn run = fn;
    int64_t P = 1;
    for (const MoeTiled& b : tiled)
      if (b.rows > P && padded(b.rows) * 4 <= R * 5 && R >= 2 * b.rows * used) run = b.fn, P = b.rows;
    const int64_t Rp = padded(P);
    std::vector<int64_t> start(size_t(E) + 1, 0);
    for (size_t e = 0; e < size_t(E); ++e) start[e + 1] = start[e] + (count[e] + P - 1) / P * P;
    Mat<float> xp(Rp, H);
    IMat eid(1, Rp), pos(T, k);
    std::vector<int64_t> next(start.begin(), start.end() - 1);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t j = 0; j < k; ++j) {
        const int e = ex(t, j);
        const int64_t p = next[size_t(e)]++;
        xp.row(p) = xm.row(t);
        eid(0, p) = e;
        pos(t, j) = int32_t(p);
      }
    for (size_t e = 0; e < size_t(E); ++e)
      for (int64_t p = next[e]; p < start[e + 1]; ++p) {
        xp.row(p) = xp.row(p - 1);
        eid(0, p) = int32_t(e);
      }
    const int iRp = dim(Rp, "padded rows");
    auto xb = io.in<float>(Tensor::from(std::move(xp)), {iH, iRp});
    auto eb = io.in<int32_t>(Tensor::from_i32(std::move(eid)), {iRp});
    auto pb = io.in<int32_t>(Tensor::from_i32(std::move(pos)), {ik, iT});
    if (T > 0) io.run(what, [&] { return run(xb, eb, gb, ub, db, pb, wb, yb); });
    a.set("y", y);
  };
}

// halide:<op>:<schedule> (CPU; "tuned" is the family default) or halide-vulkan:<op>:<schedule> ("gpu_tuned").
void add(Registry& r, On on, const std::string& op, const std::string& schedule, const std::string& summary,
         std::function<void(VariantCtx&, OpArgs&)> run) {
  const bool vk = on == On::Vulkan;
  Variant v;
  v.op = op;
  v.name = (vk ? "halide-vulkan:" : "halide:") + op + ":" + schedule;
  v.summary = std::string(vk ? "Halide, Vulkan (Halide's kernels on hybridlab's device, buffers and stream)" : "Halide, CPU (AVX2)") +
              ", schedule " + schedule + ": " + summary;
  v.family_default = schedule == (vk ? "gpu_tuned" : "tuned");
  v.status = schedule.find("plain") != std::string::npos ? "baseline" : "experimental";  // plain: the algorithm as written
  v.needs_device = vk;
  v.capturable = true;
#ifdef HYBRIDLAB_HALIDE_VULKAN
  if (vk) {
    v.tunables = {{"halide.vulkan.own_dispatch", 1, {}}};  // 0: Halide's runtime submits each kernel and waits
    // Its kernels on hybridlab's stream are captured as any; Halide's runtime submitting them itself cannot be.
    v.capturable_on = [](const Device& d) { return halide_vk::own_dispatch(d); };
    v.unavailable = vk_unavailable;
    // Halide's context on this device before any of its calls (a variant may run without the availability check).
    run = [run = std::move(run), name = v.name](VariantCtx& c, OpArgs& a) {
      if (const std::string why = vk_unavailable(c.device()); !why.empty()) fail("{} cannot run: {}", name, why);
      run(c, a);
    };
  }
#endif
  v.run = std::move(run);
  r.add_variant(std::move(v));
}

}  // namespace

void register_halide_variants(Registry& r) {
  const std::string plain = "the algorithm as written, scalar, serial";
  add(r, On::Cpu, "add", "plain", plain, residual_add(hl_add_plain, On::Cpu, "hl_add_plain"));
  add(r, On::Cpu, "add", "tuned", "8-wide, 16 rows per task", residual_add(hl_add_tuned, On::Cpu, "hl_add_tuned"));
  const std::string addnorm_how = "y = x + a (+ b) and rmsnorm of y from one loop nest (a build per addend count); ";
  add(r, On::Cpu, "add_rmsnorm", "plain", addnorm_how + plain,
      add_rmsnorm(hl_add_rmsnorm_plain, hl_add_rmsnorm_plain_two, On::Cpu, "hl_add_rmsnorm_plain"));
  add(r, On::Cpu, "add_rmsnorm", "tuned", addnorm_how + "8-wide, 16 rows per task, sum of squares in 8 lanes (rfactor)",
      add_rmsnorm(hl_add_rmsnorm_tuned, hl_add_rmsnorm_tuned_two, On::Cpu, "hl_add_rmsnorm_tuned"));
  const std::string rope_how = "cosines and sines per (token, pair) from the host in double; ";
  add(r, On::Cpu, "rope", "plain", rope_how + plain, rope(hl_rope_plain, On::Cpu, "hl_rope_plain"));
  add(r, On::Cpu, "rope", "tuned", rope_how + "8 dims wide, 16 (head, token) rows per task", rope(hl_rope_tuned, On::Cpu, "hl_rope_tuned"));
  add(r, On::Cpu, "slice", "plain", plain, slice(hl_slice_plain, On::Cpu, "hl_slice_plain"));
  add(r, On::Cpu, "slice", "tuned", "8-wide along a row, 16 rows per task", slice(hl_slice_tuned, On::Cpu, "hl_slice_tuned"));
  add(r, On::Cpu, "l2norm", "plain", plain, l2norm(hl_l2norm_plain, On::Cpu, "hl_l2norm_plain"));
  add(r, On::Cpu, "l2norm", "tuned", "8-wide, sum of squares in 8 lanes (rfactor), 16 heads per task",
          l2norm(hl_l2norm_tuned, On::Cpu, "hl_l2norm_tuned"));
  const std::string rank_how = "top-k by ranks (each expert's count of experts ahead of it), no sort; ";
  add(r, On::Cpu, "moe_router", "plain", rank_how + "every stage once per token, serial, scalar",
      moe_router(hl_moe_router_plain, On::Cpu, "hl_moe_router_plain"));
  add(r, On::Cpu, "moe_router", "tuned", rank_how + "4 tokens per parallel task, per-expert stages 8 wide",
      moe_router(hl_moe_router_tuned, On::Cpu, "hl_moe_router_tuned"));
  add(r, On::Cpu, "embed", "plain", "the table in f32; " + plain, embed(hl_embed_plain, On::Cpu, "hl_embed_plain"));
  add(r, On::Cpu, "embed", "tuned", "the table in f32; 8-wide along a row, 4 tokens per task", embed(hl_embed_tuned, On::Cpu, "hl_embed_tuned"));
  const std::string sh_how = "the gate and up products once each, SwiGLU inline in the down product, f32 weights; ";
  add(r, On::Cpu, "shared_expert", "plain", sh_how + plain, shared_expert(hl_shared_expert_plain, On::Cpu, "hl_shared_expert_plain"));
  add(r, On::Cpu, "shared_expert", "tuned", sh_how + "each product as matmul's tuned schedule (8 lanes, 3 x 4 tiles, 64 rows per task)",
      shared_expert(hl_shared_expert_tuned, On::Cpu, "hl_shared_expert_tuned"));
  add(r, On::Cpu, "ssm_gates", "plain", plain, ssm_gates(hl_ssm_gates_plain, On::Cpu, "hl_ssm_gates_plain"));
  add(r, On::Cpu, "ssm_gates", "tuned", "8 heads wide, 16 tokens per task", ssm_gates(hl_ssm_gates_tuned, On::Cpu, "hl_ssm_gates_tuned"));
  add(r, On::Cpu, "rmsnorm", "plain", plain, rmsnorm(hl_rmsnorm_plain, On::Cpu, "hl_rmsnorm_plain"));
  add(r, On::Cpu, "rmsnorm", "tuned", "8-wide, sum of squares in 8 lanes (rfactor), 16 rows per task",
          rmsnorm(hl_rmsnorm_tuned, On::Cpu, "hl_rmsnorm_tuned"));
  add(r, On::Cpu, "gated_rmsnorm", "plain", plain, gated_rmsnorm(hl_gated_rmsnorm_plain, On::Cpu, "hl_gated_rmsnorm_plain"));
  add(r, On::Cpu, "gated_rmsnorm", "tuned", "8-wide, sum of squares in 8 lanes (rfactor), 16 rows per task",
          gated_rmsnorm(hl_gated_rmsnorm_tuned, On::Cpu, "hl_gated_rmsnorm_tuned"));
  for (const char* op : {"matmul", "lm_head"}) {
    add(r, On::Cpu, op, "plain", plain + "; Q8_0 weights decoded in the pipeline",
            matmul(hl_matmul_plain, hl_matmul_q8_0_plain, On::Cpu, "hl_matmul_plain"));
    add(r, On::Cpu, op, "tuned",
            "reduction in 8 lanes (rfactor) over whole blocks, 3 x 4 register tile (4 x 1 for one token), up to 64 "
            "outputs per task and at least 4 tasks; Q8_0 weights decoded in the pipeline",
            matmul(hl_matmul_tuned, hl_matmul_q8_0_tuned, On::Cpu, "hl_matmul_tuned", hl_matmul_tuned_t1));
  }
  const std::string prep_how = "conv + silu, the q/k/v split, the q/k heads' l2 norms and the gates in one pipeline; ";
  add(r, On::Cpu, "gdn_prep", "plain", prep_how + "every stage at its use, scalar, serial",
      gdn_prep(hl_gdn_prep_plain, On::Cpu, "hl_gdn_prep_plain"));
  add(r, On::Cpu, "gdn_prep", "tuned", prep_how + "the conv output and sums of squares stored once, 8 wide, 16 tokens per task",
      gdn_prep(hl_gdn_prep_tuned, On::Cpu, "hl_gdn_prep_tuned"));
  add(r, On::Cpu, "ssm_conv", "plain", plain, ssm_conv(hl_ssm_conv_plain, On::Cpu, "hl_ssm_conv_plain"));
  add(r, On::Cpu, "ssm_conv", "tuned", "tasks of 512 channels, each vector of 8 walking the tokens with its taps in registers",
          ssm_conv(hl_ssm_conv_tuned, On::Cpu, "hl_ssm_conv_tuned"));
  add(r, On::Cpu, "ssm_scan", "plain", "chunked form (C = 64), every stage whole, breadth first, scalar, serial",
          ssm_scan(hl_ssm_scan_plain, On::Cpu, "hl_ssm_scan_plain"));
  const std::string scan_one_call =
      "every chunk in one call: inputs repacked per (chunk, head), the solve per (chunk, head) task, the state pass parallel "
      "over heads, 8-wide along d_v";
  add(r, On::Cpu, "ssm_scan", "one_call",
      scan_one_call + "; C = 64 (C = 16 for T <= 32); one token: the recurrent form's step (the state updated in place, "
      "tasks over value heads)",
      ssm_scan(hl_ssm_scan_one_call, On::Cpu, "hl_ssm_scan_one_call", hl_ssm_scan_one_call_c16, 32, hl_ssm_scan_step_tuned));
  add(r, On::Cpu, "ssm_scan", "tuned",
      "one call per chunk of 16, the state updated in place: K S and Q S in one product, A = (I + N)^-1, V' = A beta (V - "
      "e^gam K S), every product on 16 x 4 register tiles, tasks over value heads; one token: the recurrent form's step",
      ssm_scan_chunks(hl_ssm_scan_chunk_tuned, On::Cpu, "hl_ssm_scan_chunk_tuned"));
  add(r, On::Cpu, "attention", "plain", "one row of scores per (token, head), scalar, serial",
          attention(hl_attention_plain, On::Cpu, "hl_attention_plain"));
  add(r, On::Cpu, "attention", "tuned",
      "keys transposed once, tiles of 8 tokens of one head per task, 8-wide; prompts of whole tiles on register tiles "
      "with the masked triangle skipped; one token: scores as dot products along d on register tiles of 4 keys (the "
      "cache read in place), the value sum on tiles of 32 values of d",
      attention(hl_attention_tuned, On::Cpu, "hl_attention_tuned", hl_attention_tuned_blocked, 8, hl_attention_tuned_dot));
  add(r, On::Cpu, "moe_experts", "plain", "rows packed by expert on the host; every stage whole, scalar, serial",
          moe_experts(hl_moe_experts_plain, On::Cpu, "hl_moe_experts_plain"));
  add(r, On::Cpu, "moe_experts", "tuned",
          "rows packed by expert on the host; tasks of 4-16 packed rows, the products in 8 lanes (rfactor) on register "
          "tiles of 1, 2 or 4 rows of one expert (each expert's rows padded to whole tiles where that adds <= 25%)",
          moe_experts(hl_moe_experts_tuned, On::Cpu, "hl_moe_experts_tuned",
                      {{2, hl_moe_experts_tuned_p2}, {4, hl_moe_experts_tuned_p4}}));
#ifdef HYBRIDLAB_HALIDE_VULKAN
  add(r, On::Vulkan, "add", "gpu_plain", "one thread per value, blocks of 64", residual_add(hl_add_gpu_plain, On::Vulkan, "hl_add_gpu_plain"));
  add(r, On::Vulkan, "add", "gpu_tuned", "one thread per value, blocks of 256", residual_add(hl_add_gpu_tuned, On::Vulkan, "hl_add_gpu_tuned"));
  add(r, On::Vulkan, "add_rmsnorm", "gpu_plain", addnorm_how + "one kernel, a thread per row",
      add_rmsnorm(hl_add_rmsnorm_gpu_plain, hl_add_rmsnorm_gpu_plain_two, On::Vulkan, "hl_add_rmsnorm_gpu_plain"));
  add(r, On::Vulkan, "add_rmsnorm", "gpu_tuned", addnorm_how + "one kernel, a block of 128 threads per row (partial sums "
      "in shared memory)",
      add_rmsnorm(hl_add_rmsnorm_gpu_tuned, hl_add_rmsnorm_gpu_tuned_two, On::Vulkan, "hl_add_rmsnorm_gpu_tuned"));
  const std::string rope_gpu_how = "cosines and sines formed on the host in double, tables of positions kept on the device; ";
  add(r, On::Vulkan, "rope", "gpu_plain", rope_gpu_how + "one thread per value, blocks of 64",
         rope(hl_rope_gpu_plain, On::Vulkan, "hl_rope_gpu_plain"));
  add(r, On::Vulkan, "rope", "gpu_tuned", rope_gpu_how + "one thread per value, blocks of 256",
         rope(hl_rope_gpu_tuned, On::Vulkan, "hl_rope_gpu_tuned"));
  add(r, On::Vulkan, "slice", "gpu_plain", "one thread per value, blocks of 64", slice(hl_slice_gpu_plain, On::Vulkan, "hl_slice_gpu_plain"));
  add(r, On::Vulkan, "slice", "gpu_tuned", "one thread per value, blocks of 256", slice(hl_slice_gpu_tuned, On::Vulkan, "hl_slice_gpu_tuned"));
  add(r, On::Vulkan, "l2norm", "gpu_plain", "one thread per head", l2norm(hl_l2norm_gpu_plain, On::Vulkan, "hl_l2norm_gpu_plain"));
  add(r, On::Vulkan, "l2norm", "gpu_tuned", "one block of 128 threads per head, partial sums in shared memory",
         l2norm(hl_l2norm_gpu_tuned, On::Vulkan, "hl_l2norm_gpu_tuned"));
  add(r, On::Vulkan, "ssm_gates", "gpu_plain", "one thread per (head, token), blocks of 64",
         ssm_gates(hl_ssm_gates_gpu_plain, On::Vulkan, "hl_ssm_gates_gpu_plain"));
  add(r, On::Vulkan, "ssm_gates", "gpu_tuned", "one thread per (head, token), blocks of 256",
         ssm_gates(hl_ssm_gates_gpu_tuned, On::Vulkan, "hl_ssm_gates_gpu_tuned"));
  add(r, On::Vulkan, "moe_router", "gpu_plain", rank_how + "a thread per (expert, token), blocks of 64",
      moe_router(hl_moe_router_gpu_plain, On::Vulkan, "hl_moe_router_gpu_plain"));
  add(r, On::Vulkan, "moe_router", "gpu_tuned", rank_how + "a thread per (expert, token), blocks of 256",
      moe_router(hl_moe_router_gpu_tuned, On::Vulkan, "hl_moe_router_gpu_tuned"));
  add(r, On::Vulkan, "embed", "gpu_plain", "the table in f32 (uploaded whole each call); a thread per value, blocks of 64",
      embed(hl_embed_gpu_plain, On::Vulkan, "hl_embed_gpu_plain"));
  add(r, On::Vulkan, "embed", "gpu_tuned", "the table in f32 (uploaded whole each call); a thread per value, blocks of 256",
      embed(hl_embed_gpu_tuned, On::Vulkan, "hl_embed_gpu_tuned"));
  add(r, On::Vulkan, "shared_expert", "gpu_plain", sh_how + "a thread per output of each product",
      shared_expert(hl_shared_expert_gpu_plain, On::Vulkan, "hl_shared_expert_gpu_plain"));
  add(r, On::Vulkan, "shared_expert", "gpu_tuned", sh_how + "each reduction over 64 threads, 4 x 4 outputs per block",
      shared_expert(hl_shared_expert_gpu_tuned, On::Vulkan, "hl_shared_expert_gpu_tuned"));
  add(r, On::Vulkan, "rmsnorm", "gpu_plain", "one thread per row", rmsnorm(hl_rmsnorm_gpu_plain, On::Vulkan, "hl_rmsnorm_gpu_plain"));
  add(r, On::Vulkan, "rmsnorm", "gpu_tuned", "one block of 128 threads per row, partial sums in shared memory",
         rmsnorm(hl_rmsnorm_gpu_tuned, On::Vulkan, "hl_rmsnorm_gpu_tuned"));
  add(r, On::Vulkan, "gated_rmsnorm", "gpu_plain", "one thread per row",
         gated_rmsnorm(hl_gated_rmsnorm_gpu_plain, On::Vulkan, "hl_gated_rmsnorm_gpu_plain"));
  add(r, On::Vulkan, "gated_rmsnorm", "gpu_tuned", "one block of 128 threads per row, partial sums in shared memory",
         gated_rmsnorm(hl_gated_rmsnorm_gpu_tuned, On::Vulkan, "hl_gated_rmsnorm_gpu_tuned"));
  for (const char* op : {"matmul", "lm_head"}) {
    add(r, On::Vulkan, op, "gpu_plain", "one thread per output", matmul(hl_matmul_gpu_plain, nullptr, On::Vulkan, "hl_matmul_gpu_plain"));
    add(r, On::Vulkan, op, "gpu_tuned", "4 x 4 outputs per block, the reduction over 64 threads, partials in shared memory",
           matmul(hl_matmul_gpu_tuned, nullptr, On::Vulkan, "hl_matmul_gpu_tuned"));
  }
  add(r, On::Vulkan, "gdn_prep", "gpu_plain", prep_how + "the conv, the sums of squares and each output a kernel, a thread per value "
      "(blocks of 64)", gdn_prep(hl_gdn_prep_gpu_plain, On::Vulkan, "hl_gdn_prep_gpu_plain"));
  add(r, On::Vulkan, "gdn_prep", "gpu_tuned", prep_how + "q, k and v each a kernel that convolves its own channels (a thread per channel "
      "walking 4 tokens, its window in registers; q and k a block of 128 threads per head, its u and sums in shared memory), "
      "no kernel between; the two gates one kernel, the state one",
      gdn_prep(hl_gdn_prep_gpu_tuned, On::Vulkan, "hl_gdn_prep_gpu_tuned"));
  add(r, On::Vulkan, "ssm_conv", "gpu_plain", "one thread per (channel, token), blocks of 64",
         ssm_conv(hl_ssm_conv_gpu_plain, On::Vulkan, "hl_ssm_conv_gpu_plain"));
  add(r, On::Vulkan, "ssm_conv", "gpu_tuned", "a thread per channel walking 8 tokens, its taps and window in registers (blocks of 128)",
         ssm_conv(hl_ssm_conv_gpu_tuned, On::Vulkan, "hl_ssm_conv_gpu_tuned"));
  add(r, On::Vulkan, "attention", "gpu_plain", "each stage its own kernel, one thread per value, blocks of 64",
         attention(hl_attention_gpu_plain, On::Vulkan, "hl_attention_gpu_plain"));
  add(r, On::Vulkan, "attention", "gpu_tuned",
         "scores of 64 keys x 4 tokens per block (queries in shared memory), row max and sum over 64 threads "
         "(partials in shared memory), outputs of 64 d x 4 tokens per block",
         attention(hl_attention_gpu_tuned, On::Vulkan, "hl_attention_gpu_tuned"));
  const std::string scan_gpu = "chunked form (C = 64), a kernel per stage; the solve one thread per column of [U | W], "
                               "the state pass one thread per (value column, head) over all chunks";
  add(r, On::Vulkan, "ssm_scan", "gpu_plain", scan_gpu + ", one thread per output value",
         ssm_scan(hl_ssm_scan_gpu_plain, On::Vulkan, "hl_ssm_scan_gpu_plain"));
  add(r, On::Vulkan, "ssm_scan", "gpu_tuned", scan_gpu + ", the solve's C x C matrix staged in shared memory per block, "
         "4 output rows per thread (state and corrected values read once for them)",
         ssm_scan(hl_ssm_scan_gpu_tuned, On::Vulkan, "hl_ssm_scan_gpu_tuned"));
  const std::string moe_gpu = "a row per (token, slot), read from the routes on the device (no packing); activations, "
                              "expert outputs and slot sum a kernel each, ";
  add(r, On::Vulkan, "moe_experts", "gpu_plain", moe_gpu + "one thread per value",
         moe_experts(hl_moe_experts_gpu_plain, On::Vulkan, "hl_moe_experts_gpu_plain"));
  add(r, On::Vulkan, "moe_experts", "gpu_tuned", moe_gpu + "4 values x 4 rows per block, reductions over 64 threads "
         "(partials in shared memory)", moe_experts(hl_moe_experts_gpu_tuned, On::Vulkan, "hl_moe_experts_gpu_tuned"));
#endif
  // Sweep points (hl_sweeps.h), CPU and Vulkan: each a variant beside the named schedules, timed and checked as they are.
#define HL_SWEEP_POINT(op, wrap, gen, point, what, on) \
  add(r, On::on, op, #point, "sweep point: " what, wrap(gen##_##point, On::on, #gen "_" #point));
#ifdef HL_SWEEP_hl_rmsnorm
#define HL_X(point, what, on) HL_SWEEP_POINT("rmsnorm", rmsnorm, hl_rmsnorm, point, what, on)
  HL_SWEEP_hl_rmsnorm(HL_X)
#undef HL_X
#endif
#ifdef HL_SWEEP_hl_gated_rmsnorm
#define HL_X(point, what, on) HL_SWEEP_POINT("gated_rmsnorm", gated_rmsnorm, hl_gated_rmsnorm, point, what, on)
  HL_SWEEP_hl_gated_rmsnorm(HL_X)
#undef HL_X
#endif
#ifdef HL_SWEEP_hl_l2norm
#define HL_X(point, what, on) HL_SWEEP_POINT("l2norm", l2norm, hl_l2norm, point, what, on)
  HL_SWEEP_hl_l2norm(HL_X)
#undef HL_X
#endif
#ifdef HL_SWEEP_hl_rope
#define HL_X(point, what, on) HL_SWEEP_POINT("rope", rope, hl_rope, point, what, on)
  HL_SWEEP_hl_rope(HL_X)
#undef HL_X
#endif
#ifdef HL_SWEEP_hl_ssm_conv
#define HL_X(point, what, on) HL_SWEEP_POINT("ssm_conv", ssm_conv, hl_ssm_conv, point, what, on)
  HL_SWEEP_hl_ssm_conv(HL_X)
#undef HL_X
#endif
#ifdef HL_SWEEP_hl_gdn_prep
#define HL_X(point, what, on) HL_SWEEP_POINT("gdn_prep", gdn_prep, hl_gdn_prep, point, what, on)
  HL_SWEEP_hl_gdn_prep(HL_X)
#undef HL_X
#endif
#ifdef HL_SWEEP_hl_attention
#define HL_X(point, what, on) HL_SWEEP_POINT("attention", attention, hl_attention, point, what, on)
  HL_SWEEP_hl_attention(HL_X)
#undef HL_X
#endif
#ifdef HL_SWEEP_hl_ssm_scan_chunk
#define HL_X(point, what, on) HL_SWEEP_POINT("ssm_scan", ssm_scan_chunks, hl_ssm_scan_chunk, point, what, on)
  HL_SWEEP_hl_ssm_scan_chunk(HL_X)
#undef HL_X
#endif
#ifdef HL_SWEEP_hl_moe_experts
#define HL_X(point, what, on) HL_SWEEP_POINT("moe_experts", moe_experts, hl_moe_experts, point, what, on)
  HL_SWEEP_hl_moe_experts(HL_X)
#undef HL_X
#endif
#undef HL_SWEEP_POINT
}

}  // namespace hl::gpu
