// The Halide variants: thin wrappers that view the op's host tensors as Halide buffers (row-major Eigen
// memory, dimension 0 innermost, no copies), call the AOT pipeline of one schedule and hand the outputs
// back. halide:<op>:<schedule> runs on the CPU (Halide's thread pool, as many threads as OpenMP uses);
// halide-vulkan:<op>:<schedule> runs through Halide's own Vulkan runtime, seeded with hybridlab's instance, device
// and queue (so on the same VkDevice as the hand-written kernels); its data still crosses through the host.
#include "ops/halide/halide.h"
#include "env.h"

#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "HalideBuffer.h"
#include "HalideRuntime.h"
#include "ops/vulkan_variant.h"
#include "hl_add_plain.h"
#include "hl_add_tuned.h"
#include "hl_attention_plain.h"
#include "hl_attention_tuned.h"
#include "hl_gated_rmsnorm_plain.h"
#include "hl_gated_rmsnorm_tuned.h"
#include "hl_l2norm_plain.h"
#include "hl_l2norm_tuned.h"
#include "hl_matmul_plain.h"
#include "hl_matmul_q8_0_plain.h"
#include "hl_matmul_q8_0_tuned.h"
#include "hl_matmul_tuned.h"
#include "hl_moe_experts_plain.h"
#include "hl_moe_experts_tuned.h"
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
#include "hl_ssm_scan_tuned.h"
#include "hl_ssm_scan_tuned_c16.h"
#ifdef HYBRIDLAB_HALIDE_VULKAN
#include "HalideRuntimeVulkan.h"
#include "hl_add_gpu_plain.h"
#include "hl_add_gpu_tuned.h"
#include "hl_attention_gpu_plain.h"
#include "hl_attention_gpu_tuned.h"
#include "hl_gated_rmsnorm_gpu_plain.h"
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
#endif

namespace {
thread_local std::string last_halide_error;
thread_local double last_ns = 0;
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
double last_pipeline_ns() { return last_ns; }
int cpu_threads() {
  static const int n = [] {
    const int t = std::max(1, omp_get_max_threads());
    halide_set_num_threads(t);
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
}  // namespace halide

namespace {

using Halide::Runtime::Buffer;
using Clock = std::chrono::steady_clock;

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

#ifdef HYBRIDLAB_HALIDE_VULKAN
// Runs a Vulkan pipeline on host buffers: inputs copied to the device first, the call timed until its
// outputs are synced, outputs copied back.
// Every buffer's device memory is a separate allocation padded to whole 256 bytes, attached to the buffer
// before the call (and freed after): with Halide 21 on lavapipe, the last (bytes % 64) bytes of a storage
// buffer whose size is not a multiple of 64 bytes were neither read nor written by the kernels (measured;
// an allocation of the exact size loses them).
template <class F>
void vk_call(const std::string& what, std::initializer_list<halide_buffer_t*> inputs,
             std::initializer_list<halide_buffer_t*> outputs, F&& fn) {
  const halide_device_interface_t* vk = halide_vulkan_device_interface();
  std::vector<Buffer<uint8_t>> padded;
  std::vector<halide_buffer_t*> attached;
  struct Detach {  // runs first at exit: the padded buffers own the device memory
    std::vector<halide_buffer_t*>& bufs;
    ~Detach() {
      for (halide_buffer_t* b : bufs) {
        b->device = 0;
        b->device_interface = nullptr;
        b->set_device_dirty(false);
      }
    }
  };
  padded.reserve(inputs.size() + outputs.size());
  Detach detach{attached};
  for (auto list : {inputs, outputs})
    for (halide_buffer_t* b : list) {
      const size_t bytes = (b->size_in_bytes() + 255) / 256 * 256;
      padded.emplace_back(std::vector<int>{dim(int64_t(bytes), "device bytes")});
      check(padded.back().device_malloc(vk), what + " (device allocation)");
      b->device = padded.back().raw_buffer()->device;
      b->device_interface = vk;
      attached.push_back(b);
    }
  // Transfers go through the padded buffers too, in whole 256-byte units: Halide 21's staging allocation
  // failed on lavapipe for some odd sizes (a 33 x 129 f32 input: "Failed to allocate device memory").
  for (size_t i = 0; i < inputs.size(); ++i) {
    halide_buffer_t* b = inputs.begin()[i];
    std::memcpy(padded[i].data(), b->host, b->size_in_bytes());
    padded[i].set_host_dirty(true);
    check(padded[i].copy_to_device(vk), what + " (upload)");
    check(padded[i].device_sync(), what + " (upload)");
    b->set_host_dirty(false);
  }
  const auto t0 = Clock::now();
  check(fn(), what);
  for (halide_buffer_t* b : outputs) check(halide_device_sync(nullptr, b), what + " (sync)");
  last_ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
  for (size_t i = 0; i < outputs.size(); ++i) {
    halide_buffer_t* b = outputs.begin()[i];
    Buffer<uint8_t>& p = padded[inputs.size() + i];
    p.set_device_dirty(true);
    check(p.copy_to_host(), what + " (download)");
    std::memcpy(b->host, p.data(), b->size_in_bytes());
    b->set_device_dirty(false);
  }
}

// Halide's Vulkan runtime on hybridlab's device. Halide 21 keeps one Vulkan context per process in weak globals and
// makes its own instance and device on first use (src/runtime/vulkan_context.h at v21.0.0); nothing public hands it
// another's. So the globals are seeded here, before Halide's first call, with hybridlab's instance, device and queue, its
// Vulkan entry points are loaded for them, and its memory allocator is made on that device: the layout below mirrors
// Halide 21's runtime (the wheel is pinned; tests/ops run every halide-vulkan variant through it).
struct HalideVulkan {
  VkDevice device = VK_NULL_HANDLE;  // the device Halide's runtime was seeded with (none: not yet, or released)
  std::string name;
};
HalideVulkan& halide_vulkan() {
  static HalideVulkan* h = new HalideVulkan;  // never destroyed: a device's teardown at exit may still reset it
  return *h;
}
#endif

}  // namespace
}  // namespace hl::gpu

#ifdef HYBRIDLAB_HALIDE_VULKAN
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
  HalideVulkan& h = halide_vulkan();
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
  h = {c.device(), d.info().name};
  // Before the device goes: Halide's pipelines, shader modules and memory released through its own teardown, which
  // would also destroy the device and instance it was handed: those two calls are made no-ops first (the context is
  // hybridlab's to destroy).
  c.on_teardown([] {
    V::vkDestroyDevice = keep_device;
    V::vkDestroyInstance = keep_instance;
    halide_device_release(nullptr, halide_vulkan_device_interface());
    halide_vulkan() = {};
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
using ConvFn = int (*)(halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, halide_buffer_t*);
using ScanFn = int (*)(halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, halide_buffer_t*,
                       halide_buffer_t*, int32_t, halide_buffer_t*, halide_buffer_t*);
using AttnFn = int (*)(halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, int32_t, halide_buffer_t*);
using MoeFn = int (*)(halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, halide_buffer_t*,
                      halide_buffer_t*, halide_buffer_t*, halide_buffer_t*);

// Where a pipeline runs: the CPU, or Halide's Vulkan runtime.
enum class On { Cpu, Vulkan };

template <class F>
void call(On on, const std::string& what, std::initializer_list<halide_buffer_t*> in,
          std::initializer_list<halide_buffer_t*> out, F&& fn) {
#ifdef HYBRIDLAB_HALIDE_VULKAN
  if (on == On::Vulkan) return vk_call(what, in, out, std::forward<F>(fn));
#endif
  cpu_call(what, std::forward<F>(fn));
}

std::function<void(VariantCtx&, OpArgs&)> residual_add(AddFn fn, On on, std::string what) {
  return [=](VariantCtx&, OpArgs& a) {
    const Mat<float>&x = a.in("a").f32(), &y0 = a.in("b").f32();
    if (x.rows() != y0.rows() || x.cols() != y0.cols())
      fail("add: a [{}, {}] and b [{}, {}] differ", x.rows(), x.cols(), y0.rows(), y0.cols());
    Mat<float> y(x.rows(), x.cols());
    const int C = dim(x.cols(), "columns"), R = dim(x.rows(), "rows");
    auto ab = view(x, {C, R}), bb = view(y0, {C, R}), yb = view(y, {C, R});
    if (y.size()) call(on, what, {ab.raw_buffer(), bb.raw_buffer()}, {yb.raw_buffer()}, [&] { return fn(ab, bb, yb); });
    a.set("y", Tensor::from(std::move(y)));
  };
}

// The angles' cosines and sines per (token, pair) are formed on the host in double, as the reference's; the pipeline rotates.
std::function<void(VariantCtx&, OpArgs&)> rope(RopeFn fn, On on, std::string what) {
  return [=](VariantCtx&, OpArgs& a) {
    const Mat<float>& x = a.in("x").f32();
    const int64_t D = a.iparam("head_dim"), R = a.iparam("rot_dims"), pos0 = a.iparam("pos0");
    if (D <= 0 || x.cols() % D || R < 0 || R % 2 || R > D)
      fail("rope: {} columns, head dim {}, rotary dims {} are inconsistent", x.cols(), D, R);
    const int64_t half = R / 2;
    if (half == 0 || x.size() == 0) {  // nothing rotates
      a.set("y", Tensor::from(Mat<float>(x)));
      return;
    }
    const double theta = a.param("theta");
    Mat<float> cs(x.rows(), half), sn(x.rows(), half);
    for (int64_t t = 0; t < x.rows(); ++t)
      for (int64_t i = 0; i < half; ++i) {
        const double ang = double(pos0 + t) * std::pow(theta, -2.0 * double(i) / double(R));
        cs(t, i) = float(std::cos(ang));
        sn(t, i) = float(std::sin(ang));
      }
    Mat<float> y(x.rows(), x.cols());
    const int T = dim(x.rows(), "tokens"), H = dim(x.cols() / D, "heads"), iD = dim(D, "head dim"), ih = dim(half, "pairs");
    auto xb = view(x, {iD, H, T}), cb = view(cs, {ih, T}), sb = view(sn, {ih, T}), yb = view(y, {iD, H, T});
    call(on, what, {xb.raw_buffer(), cb.raw_buffer(), sb.raw_buffer()}, {yb.raw_buffer()}, [&] { return fn(xb, cb, sb, yb); });
    a.set("y", Tensor::from(std::move(y)));
  };
}

std::function<void(VariantCtx&, OpArgs&)> slice(SliceFn fn, On on, std::string what) {
  return [=](VariantCtx&, OpArgs& a) {
    const Mat<float>& x = a.in("x").f32();
    const int64_t period = a.iparam("period"), offset = a.iparam("offset"), width = a.iparam("width");
    if (period <= 0 || x.cols() % period || offset < 0 || width < 0 || offset + width > period)
      fail("slice: columns [{}, {}) of blocks of {} do not fit {} columns", offset, offset + width, period, x.cols());
    Mat<float> y(x.rows(), x.cols() / period * width);
    const int T = dim(x.rows(), "rows");
    auto xb = view(x, {dim(x.cols(), "columns"), T}), yb = view(y, {dim(y.cols(), "columns"), T});
    if (y.size()) call(on, what, {xb.raw_buffer()}, {yb.raw_buffer()}, [&] { return fn(xb, int(period), int(offset), int(width), yb); });
    a.set("y", Tensor::from(std::move(y)));
  };
}

std::function<void(VariantCtx&, OpArgs&)> l2norm(L2NormFn fn, On on, std::string what) {
  return [=](VariantCtx&, OpArgs& a) {
    const Mat<float>& x = a.in("x").f32();
    const int64_t D = a.iparam("head_dim");
    if (D <= 0 || x.cols() % D) fail("l2norm: {} columns are not a multiple of the head dim {}", x.cols(), D);
    Mat<float> y(x.rows(), x.cols());
    const int rows = dim(x.size() / D, "rows");
    auto xb = view(x, {int(D), rows}), yb = view(y, {int(D), rows});
    call(on, what, {xb.raw_buffer()}, {yb.raw_buffer()},
         [&] { return fn(xb, float(a.param("scale")), float(a.param("eps")), yb); });
    a.set("y", Tensor::from(std::move(y)));
  };
}

std::function<void(VariantCtx&, OpArgs&)> ssm_gates(GatesFn fn, On on, std::string what) {
  return [=](VariantCtx& c, OpArgs& a) {
    const Mat<float>&b = a.in("b").f32(), &av = a.in("a").f32();
    const Vec<float> A = c.weights->host_vec(a.weight("A")), dt = c.weights->host_vec(a.weight("dt_bias"));
    const int64_t nv = A.size();
    if (b.cols() != nv || av.cols() != nv || dt.size() != nv || av.rows() != b.rows())
      fail("ssm_gates: b [{}, {}], a [{}, {}], A [{}], dt_bias [{}] are inconsistent", b.rows(), b.cols(), av.rows(),
           av.cols(), nv, dt.size());
    Mat<float> beta(b.rows(), nv), g(b.rows(), nv);
    const int T = dim(b.rows(), "tokens"), n = dim(nv, "heads");
    auto bb = view(b, {n, T}), ab = view(av, {n, T}), Ab = view(A.data(), {n}), db = view(dt.data(), {n});
    auto betab = view(beta, {n, T}), gb = view(g, {n, T});
    call(on, what, {bb.raw_buffer(), ab.raw_buffer(), Ab.raw_buffer(), db.raw_buffer()}, {betab.raw_buffer(), gb.raw_buffer()},
         [&] { return fn(bb, ab, Ab, db, betab, gb); });
    a.set("beta", Tensor::from(std::move(beta)));
    a.set("g", Tensor::from(std::move(g)));
  };
}

std::function<void(VariantCtx&, OpArgs&)> moe_router(RouterFn fn, On on, std::string what) {
  return [=](VariantCtx&, OpArgs& a) {
    const Mat<float>& l = a.in("logits").f32();
    const int64_t k = a.iparam("k");
    if (k <= 0 || k > l.cols()) fail("moe_router: top-{} of {} experts", k, l.cols());
    IMat expert(l.rows(), k);
    Mat<float> weight(l.rows(), k);
    const int T = dim(l.rows(), "tokens"), E = dim(l.cols(), "experts"), K = dim(k, "slots");
    auto lb = view(l, {E, T}), wb = view(weight, {K, T});
    auto eb = view(expert, {K, T});
    if (T > 0) call(on, what, {lb.raw_buffer()}, {eb.raw_buffer(), wb.raw_buffer()}, [&] { return fn(lb, K, eb, wb); });
    a.set("expert", Tensor::from_i32(std::move(expert)));
    a.set("weight", Tensor::from(std::move(weight)));
  };
}

// The whole table in f32 (a host copy, WeightStore::host); the ids checked here, as the reference does.
std::function<void(VariantCtx&, OpArgs&)> embed(EmbedFn fn, On on, std::string what) {
  return [=](VariantCtx& c, OpArgs& a) {
    const Tensor& tok = a.in("tokens");
    if (tok.type() != Tensor::Type::I32 || tok.rows() != 1) fail("embed: tokens must be i32 [1, T]");
    const WeightRef& tw = a.weight("table");
    const IMat& ids = tok.i32();
    for (int64_t t = 0; t < ids.size(); ++t)
      if (ids(0, t) < 0 || ids(0, t) >= tw.rows)
        fail("token id {} at position {} is outside the vocabulary [0, {})", ids(0, t), t, tw.rows);
    const Tensor table = c.weights->host(tw);
    const Mat<float>& tm = table.f32();
    Mat<float> y(ids.size(), tm.cols());
    const int T = dim(ids.size(), "tokens"), H = dim(tm.cols(), "hidden"), V = dim(tm.rows(), "vocabulary");
    auto ib = view(ids.data(), {T});
    auto tb = view(tm, {H, V}), yb = view(y, {H, T});
    if (T > 0) call(on, what, {ib.raw_buffer(), tb.raw_buffer()}, {yb.raw_buffer()}, [&] { return fn(ib, tb, yb); });
    a.set("y", Tensor::from(std::move(y)));
  };
}

// f32 weights (host copies, WeightStore::host), as the f32 matmul's.
std::function<void(VariantCtx&, OpArgs&)> shared_expert(SharedFn fn, On on, std::string what) {
  return [=](VariantCtx& c, OpArgs& a) {
    const Mat<float>& x = a.in("x").f32();
    const Tensor g = c.weights->host(a.weight("gate")), u = c.weights->host(a.weight("up")), d = c.weights->host(a.weight("down"));
    const Vec<float> gw = c.weights->host_vec(a.weight("gate_w"));
    const Mat<float>&gm = g.f32(), &um = u.f32(), &dm = d.f32();
    const int64_t H = x.cols(), F = gm.rows();
    if (gm.cols() != H || um.rows() != F || um.cols() != H || dm.rows() != H || dm.cols() != F || gw.size() != H)
      fail("shared_expert: x [{}, {}] does not fit gate [{}, {}], up [{}, {}], down [{}, {}], gate_w [{}]", x.rows(), H,
           gm.rows(), gm.cols(), um.rows(), um.cols(), dm.rows(), dm.cols(), gw.size());
    Mat<float> y(x.rows(), H);
    const int T = dim(x.rows(), "tokens"), iH = dim(H, "hidden"), iF = dim(F, "width");
    auto xb = view(x, {iH, T}), gb = view(gm, {iH, iF}), ub = view(um, {iH, iF}), db = view(dm, {iF, iH});
    auto wb = view(gw.data(), {iH}), yb = view(y, {iH, T});
    if (T > 0)
      call(on, what, {xb.raw_buffer(), gb.raw_buffer(), ub.raw_buffer(), db.raw_buffer(), wb.raw_buffer()}, {yb.raw_buffer()},
           [&] { return fn(xb, gb, ub, db, wb, yb); });
    a.set("y", Tensor::from(std::move(y)));
  };
}

std::function<void(VariantCtx&, OpArgs&)> rmsnorm(NormFn fn, On on, std::string what) {
  return [=](VariantCtx& c, OpArgs& a) {
    const Mat<float>& x = a.in("x").f32();
    const Vec<float> gain = c.weights->host_vec(a.weight("gain"));
    const int64_t G = gain.size();
    if (G == 0 || x.cols() % G) fail("rmsnorm: {} columns are not a multiple of the gain length {}", x.cols(), G);
    Mat<float> y(x.rows(), x.cols());
    const int rows = dim(x.size() / G, "rows");
    auto xb = view(x, {int(G), rows}), gb = view(gain.data(), {int(G)}), yb = view(y, {int(G), rows});
    call(on, what, {xb.raw_buffer(), gb.raw_buffer()}, {yb.raw_buffer()}, [&] { return fn(xb, gb, float(a.param("eps")), yb); });
    a.set("y", Tensor::from(std::move(y)));
  };
}

std::function<void(VariantCtx&, OpArgs&)> gated_rmsnorm(GatedNormFn fn, On on, std::string what) {
  return [=](VariantCtx& c, OpArgs& a) {
    const Mat<float>&o = a.in("o").f32(), &z = a.in("z").f32();
    const Vec<float> gain = c.weights->host_vec(a.weight("gain"));
    const int64_t G = gain.size();
    if (o.rows() != z.rows() || o.cols() != z.cols())
      fail("gated_rmsnorm: o [{}, {}] and z [{}, {}] differ", o.rows(), o.cols(), z.rows(), z.cols());
    if (G == 0 || o.cols() % G) fail("gated_rmsnorm: {} columns are not a multiple of the gain length {}", o.cols(), G);
    Mat<float> y(o.rows(), o.cols());
    const int rows = dim(o.size() / G, "rows");
    auto ob = view(o, {int(G), rows}), zb = view(z, {int(G), rows}), gb = view(gain.data(), {int(G)}),
         yb = view(y, {int(G), rows});
    call(on, what, {ob.raw_buffer(), zb.raw_buffer(), gb.raw_buffer()}, {yb.raw_buffer()},
         [&] { return fn(ob, zb, gb, float(a.param("eps")), yb); });
    a.set("y", Tensor::from(std::move(y)));
  };
}

// f32 weights through `fn`; Q8_0 weights through `q8` (decoded in the pipeline) when there is one; other
// storage types dequantized to f32 first.
std::function<void(VariantCtx&, OpArgs&)> matmul(MatmulFn fn, MatmulFn q8, On on, std::string what) {
  return [=](VariantCtx& c, OpArgs& a) {
    const Mat<float>& x = a.in("x").f32();
    const WeightRef& w = a.weight("w");
    if (x.cols() != w.cols) fail("matmul: input has {} columns but the weight expects {}", x.cols(), w.cols);
    Mat<float> y(x.rows(), w.rows);
    const int K = dim(x.cols(), "in"), T = dim(x.rows(), "T"), O = dim(w.rows, "out");
    auto xb = view(x, {K, T});
    auto yb = view(y, {O, T});
    if (q8 && w.storage_type() == quant::Type::Q8_0) {
      const auto raw = raw_rows(w);
      auto wb = view(raw->data(), {34, K / 32, O});
      call(on, what + " (q8_0)", {xb.raw_buffer(), wb.raw_buffer()}, {yb.raw_buffer()}, [&] { return q8(xb, wb, yb); });
    } else {
      const Tensor wt = c.weights->host(w);
      auto wb = view(wt.f32(), {K, O});
      call(on, what, {xb.raw_buffer(), wb.raw_buffer()}, {yb.raw_buffer()}, [&] { return fn(xb, wb, yb); });
    }
    a.set("y", Tensor::from(std::move(y)));
  };
}

std::function<void(VariantCtx&, OpArgs&)> ssm_conv(ConvFn fn, On on, std::string what) {
  return [=](VariantCtx& c, OpArgs& a) {
    const Mat<float>& x = a.in("x").f32();
    const Tensor wt = c.weights->host(a.weight("w"));
    const Mat<float>& w = wt.f32();
    Mat<float>& state = a.state("state").f32_mut();
    const int64_t T = x.rows(), C = x.cols(), K = w.cols();
    if (w.rows() != C || K < 2 || state.rows() != K - 1 || state.cols() != C)
      fail("ssm_conv: x [{}, {}], w [{}, {}], state [{}, {}] are inconsistent", T, C, w.rows(), K, state.rows(), state.cols());
    Mat<float> y(T, C), st(K - 1, C);
    auto xb = view(x, {int(C), dim(T, "T")}), wb = view(w, {int(K), int(C)}), sb = view(state, {int(C), int(K - 1)});
    auto yb = view(y, {int(C), int(T)}), ob = view(st, {int(C), int(K - 1)});
    call(on, what, {xb.raw_buffer(), wb.raw_buffer(), sb.raw_buffer()}, {yb.raw_buffer(), ob.raw_buffer()},
         [&] { return fn(xb, wb, sb, yb, ob); });
    state = st;
    a.set("y", Tensor::from(std::move(y)));
  };
}

// Chunk size of the Vulkan ssm_scan schedules (ops/ssm_scan/halide.cmake).
constexpr int64_t kGpuScanChunk = 64;

// `short_fn` (a build with shorter chunks), when given, serves calls of at most `short_t` tokens (decode,
// short prompt chunks), where padding to a long chunk would waste most of the work.
std::function<void(VariantCtx&, OpArgs&)> ssm_scan(ScanFn fn, On on, std::string what, ScanFn short_fn = nullptr,
                                                   int64_t short_t = 0) {
  return [=](VariantCtx& c, OpArgs& a) {
    const Mat<float> &q = a.in("q").f32(), &k = a.in("k").f32(), &v = a.in("v").f32(), &b = a.in("beta").f32(),
                     &g = a.in("g").f32();
    Mat<float>& state = a.state("state").f32_mut();
    const int64_t nk = a.iparam("n_k_heads"), T = q.rows(), nv = b.cols();
    const int64_t dk = nk > 0 ? q.cols() / nk : 0, dv = nv > 0 ? v.cols() / nv : 0;
    const bool ok = nk > 0 && nv > 0 && nv % nk == 0 && q.cols() == nk * dk && k.cols() == q.cols() && v.cols() == nv * dv &&
                    k.rows() == T && v.rows() == T && b.rows() == T && g.rows() == T && g.cols() == nv &&
                    state.rows() == nv && state.cols() == dk * dv;
    if (!ok)
      fail("ssm_scan: q [{}, {}], k [{}, {}], v [{}, {}], beta [{}, {}], g [{}, {}], state [{}, {}] do not fit {} key heads",
           q.rows(), q.cols(), k.rows(), k.cols(), v.rows(), v.cols(), b.rows(), b.cols(), g.rows(), g.cols(), state.rows(),
           state.cols(), nk);
    // The Vulkan schedules' state pass runs all chunks in one thread per value column, about
    // chunks x (2 C + 1) x d_k loop iterations; lavapipe (Mesa 22.3) silently ends an invocation's loops
    // after 65535 in all, so refuse what would pass that there rather than return garbage.
    const int64_t pass = (T + kGpuScanChunk - 1) / kGpuScanChunk * (2 * kGpuScanChunk + 1) * dk;
    if (on == On::Vulkan && c.dev && c.dev->info().driver_id == VK_DRIVER_ID_MESA_LLVMPIPE && pass > 60000)
      fail("ssm_scan: {} tokens with d_k = {} would run ~{} loop iterations per invocation, past lavapipe's limit of 65535",
           T, dk, pass);
    const int tiled = a.p.count("tiled") && a.param("tiled") != 0 ? 1 : 0;
    Mat<float> o(T, nv * dv), st(nv, dk * dv);
    const int iT = dim(T, "T");
    auto qb = view(q, {int(dk), int(nk), iT}), kb = view(k, {int(dk), int(nk), iT}), vb = view(v, {int(dv), int(nv), iT});
    auto bb = view(b, {int(nv), iT}), gb = view(g, {int(nv), iT}), sb = view(state, {int(dv), int(dk), int(nv)});
    auto ob = view(o, {int(dv), int(nv), iT}), nb = view(st, {int(dv), int(dk), int(nv)});
    const ScanFn f = short_fn && T <= short_t ? short_fn : fn;
    call(on, what, {qb.raw_buffer(), kb.raw_buffer(), vb.raw_buffer(), bb.raw_buffer(), gb.raw_buffer(), sb.raw_buffer()},
         {ob.raw_buffer(), nb.raw_buffer()}, [&] { return f(qb, kb, vb, bb, gb, sb, tiled, ob, nb); });
    state = st;
    a.set("o", Tensor::from(std::move(o)));
  };
}

std::function<void(VariantCtx&, OpArgs&)> attention(AttnFn fn, On on, std::string what) {
  return [=](VariantCtx&, OpArgs& a) {
    const Mat<float> &q = a.in("q").f32(), &k = a.in("k").f32(), &v = a.in("v").f32(), &gate = a.in("gate").f32();
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
    Mat<float>&kcm = kc.f32_mut(), &vcm = vc.f32_mut();
    kcm.middleRows(len, T) = k;
    vcm.middleRows(len, T) = v;
    Mat<float> o(T, q.cols());
    const int iT = dim(T, "T"), L = dim(len + T, "kv rows");
    auto qb = view(q, {int(D), int(nq), iT}), gb = view(gate, {int(D), int(nq), iT});
    auto kb = view(kcm, {int(D), int(nkv), L}), vb = view(vcm, {int(D), int(nkv), L}), ob = view(o, {int(D), int(nq), iT});
    call(on, what, {qb.raw_buffer(), kb.raw_buffer(), vb.raw_buffer(), gb.raw_buffer()}, {ob.raw_buffer()},
         [&] { return fn(qb, kb, vb, gb, int32_t(len), ob); });
    a.set("o", Tensor::from(std::move(o)));
  };
}

// Packs the (token, slot) pairs by expert on the host; the pipeline computes the experts over the packed
// rows and the weighted slot sum.
std::function<void(VariantCtx&, OpArgs&)> moe_experts(MoeFn fn, On on, std::string what) {
  return [=](VariantCtx& c, OpArgs& a) {
    const Mat<float>& x = a.in("x").f32();
    const IMat& expert = a.in("expert").i32();
    const Mat<float>& weight = a.in("weight").f32();
    const int64_t E = a.iparam("n_experts"), T = x.rows(), H = x.cols(), k = expert.cols();
    if (expert.rows() != T || weight.rows() != T || weight.cols() != k)
      fail("moe_experts: routes [{}, {}] do not match {} tokens", expert.rows(), k, T);
    const WeightRef &wg = a.weight("gate"), &wu = a.weight("up"), &wd = a.weight("down");
    if (E <= 0 || wg.rows % E || wd.rows != E * H || wg.cols != H || wu.rows != wg.rows || wu.cols != H)
      fail("moe_experts: x [{}, {}] does not fit {} experts gate [{}, {}], up [{}, {}], down [{}, {}]", T, H, E, wg.rows,
           wg.cols, wu.rows, wu.cols, wd.rows, wd.cols);
    const int64_t F = wg.rows / E;
    // Pack: rows of expert 0, then 1, ...; (token, slot) order within an expert.
    std::vector<int64_t> count(size_t(E) + 1, 0);
    for (int64_t i = 0; i < expert.size(); ++i) {
      const int e = expert.data()[i];
      if (e < 0 || e >= E) fail("moe_experts: expert id {} outside [0, {})", e, E);
      ++count[size_t(e) + 1];
    }
    for (size_t e = 1; e < count.size(); ++e) count[e] += count[e - 1];
    const int64_t R = T * k;
    Mat<float> xp(R, H);
    std::vector<int32_t> eid(static_cast<size_t>(R));
    IMat pos(T, k);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t j = 0; j < k; ++j) {
        const int e = expert(t, j);
        const int64_t p = count[size_t(e)]++;
        xp.row(p) = x.row(t);
        eid[size_t(p)] = e;
        pos(t, j) = int32_t(p);
      }
    const Tensor g = c.weights->host(wg), u = c.weights->host(wu), d = c.weights->host(wd);
    Mat<float> y(T, H);
    const int iR = dim(R, "rows"), iH = dim(H, "H"), iF = dim(F, "F"), iT = dim(T, "T"), ik = dim(k, "k");
    auto xb = view(xp, {iH, iR}), gb = view(g.f32(), {iH, dim(E * F, "E*F")}), ub = view(u.f32(), {iH, int(E * F)});
    auto db = view(d.f32(), {iF, dim(E * H, "E*H")}), wb = view(weight, {ik, iT}), yb = view(y, {iH, iT});
    auto pb = view(pos.data(), {ik, iT}), eb = view(eid.data(), {iR});
    call(on, what, {xb.raw_buffer(), eb.raw_buffer(), gb.raw_buffer(), ub.raw_buffer(), db.raw_buffer(), pb.raw_buffer(), wb.raw_buffer()},
         {yb.raw_buffer()}, [&] { return fn(xb, eb, gb, ub, db, pb, wb, yb); });
    a.set("y", Tensor::from(std::move(y)));
  };
}

// halide:<op>:<schedule> (CPU; "tuned" is the family default) or halide-vulkan:<op>:<schedule> ("gpu_tuned").
void add(Registry& r, On on, const std::string& op, const std::string& schedule, const std::string& summary,
         std::function<void(VariantCtx&, OpArgs&)> run) {
  const bool vk = on == On::Vulkan;
  Variant v;
  v.op = op;
  v.name = (vk ? "halide-vulkan:" : "halide:") + op + ":" + schedule;
  v.summary = std::string(vk ? "Halide, Vulkan (Halide's runtime on hybridlab's device, data through the host)" : "Halide, CPU (AVX2)") +
              ", schedule " + schedule + ": " + summary;
  v.family_default = schedule == (vk ? "gpu_tuned" : "tuned");
  v.status = schedule.find("plain") != std::string::npos ? "baseline" : "experimental";  // plain: the algorithm as written
  v.needs_device = vk;
  v.capturable = !vk;  // Halide's runtime submits its kernels itself
#ifdef HYBRIDLAB_HALIDE_VULKAN
  if (vk) {
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
  add(r, On::Cpu, "shared_expert", "tuned", sh_how + "each product as matmul's tuned schedule (8 lanes, 4 x 2 tiles, 64 rows per task)",
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
            "reduction in 8 lanes (rfactor), 4 x 2 register tile, 64 outputs per task; Q8_0 weights decoded in the pipeline",
            matmul(hl_matmul_tuned, hl_matmul_q8_0_tuned, On::Cpu, "hl_matmul_tuned"));
  }
  add(r, On::Cpu, "ssm_conv", "plain", plain, ssm_conv(hl_ssm_conv_plain, On::Cpu, "hl_ssm_conv_plain"));
  add(r, On::Cpu, "ssm_conv", "tuned", "8 channels wide, 16 tokens per task, taps transposed once",
          ssm_conv(hl_ssm_conv_tuned, On::Cpu, "hl_ssm_conv_tuned"));
  add(r, On::Cpu, "ssm_scan", "plain", "chunked form (C = 64), every stage whole, breadth first, scalar, serial",
          ssm_scan(hl_ssm_scan_plain, On::Cpu, "hl_ssm_scan_plain"));
  const std::string scan_tuned =
      "inputs repacked per (chunk, head), solve per (chunk, head) task, state pass parallel over heads, 8-wide along d_v";
  add(r, On::Cpu, "ssm_scan", "c16", "chunked form (C = 16): " + scan_tuned, ssm_scan(hl_ssm_scan_tuned_c16, On::Cpu, "hl_ssm_scan_tuned_c16"));
  add(r, On::Cpu, "ssm_scan", "tuned", "chunked form, C = 64 (C = 16 for T <= 32): " + scan_tuned,
          ssm_scan(hl_ssm_scan_tuned, On::Cpu, "hl_ssm_scan_tuned", hl_ssm_scan_tuned_c16, 32));
  add(r, On::Cpu, "attention", "plain", "one row of scores per (token, head), scalar, serial",
          attention(hl_attention_plain, On::Cpu, "hl_attention_plain"));
  add(r, On::Cpu, "attention", "tuned", "keys transposed once, tiles of 8 tokens of one head per task, 8-wide",
          attention(hl_attention_tuned, On::Cpu, "hl_attention_tuned"));
  add(r, On::Cpu, "moe_experts", "plain", "rows packed by expert on the host; every stage whole, scalar, serial",
          moe_experts(hl_moe_experts_plain, On::Cpu, "hl_moe_experts_plain"));
  add(r, On::Cpu, "moe_experts", "tuned",
          "rows packed by expert on the host; 4 packed rows per task, both products in 8 lanes (rfactor)",
          moe_experts(hl_moe_experts_tuned, On::Cpu, "hl_moe_experts_tuned"));
#ifdef HYBRIDLAB_HALIDE_VULKAN
  add(r, On::Vulkan, "add", "gpu_plain", "one thread per value, blocks of 64", residual_add(hl_add_gpu_plain, On::Vulkan, "hl_add_gpu_plain"));
  add(r, On::Vulkan, "add", "gpu_tuned", "one thread per value, blocks of 256", residual_add(hl_add_gpu_tuned, On::Vulkan, "hl_add_gpu_tuned"));
  add(r, On::Vulkan, "rope", "gpu_plain", rope_how + "one thread per value, blocks of 64",
         rope(hl_rope_gpu_plain, On::Vulkan, "hl_rope_gpu_plain"));
  add(r, On::Vulkan, "rope", "gpu_tuned", rope_how + "one thread per value, blocks of 256",
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
  add(r, On::Vulkan, "ssm_conv", "gpu_plain", "one thread per (channel, token), blocks of 64",
         ssm_conv(hl_ssm_conv_gpu_plain, On::Vulkan, "hl_ssm_conv_gpu_plain"));
  add(r, On::Vulkan, "ssm_conv", "gpu_tuned", "128 channels x 4 tokens per block, taps staged in shared memory",
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
  const std::string moe_gpu = "rows packed by expert on the host; activations, expert outputs and slot sum a kernel each, ";
  add(r, On::Vulkan, "moe_experts", "gpu_plain", moe_gpu + "one thread per value",
         moe_experts(hl_moe_experts_gpu_plain, On::Vulkan, "hl_moe_experts_gpu_plain"));
  add(r, On::Vulkan, "moe_experts", "gpu_tuned", moe_gpu + "4 values x 4 rows per block, reductions over 64 threads "
         "(partials in shared memory)", moe_experts(hl_moe_experts_gpu_tuned, On::Vulkan, "hl_moe_experts_gpu_tuned"));
#endif
}

}  // namespace hl::gpu
