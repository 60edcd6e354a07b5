// Halide's Vulkan runtime on hybridlab's device, shared by the variant wrappers (halide.cpp: the context, the wrapped
// buffers, Halide's device allocations) and the kernels on hybridlab's stream (halide_vulkan.cpp). Internal to
// ops/halide/; built with the Vulkan schedules only.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/device.h"

namespace hl::gpu::halide_vk {

// Halide 21's MemoryRegion (src/runtime/internal/memory_resources.h at v21.0.0), which its Vulkan runtime takes a
// buffer's `device` field to point at: an owning region's handle points at the VkBuffer, and a kernel's descriptor
// covers [range.head_offset, size - range.tail_offset) of it. halide_vulkan_wrap_vk_buffer stores what it is given
// there unchanged, so hybridlab's buffers are handed over as such regions.
struct Region {
  void* handle = nullptr;
  size_t offset = 0, size = 0;
  size_t head_offset = 0, tail_offset = 0;
  bool dedicated = false, is_owner = true;
  int visibility = 0, usage = 0, caching = 0;  // MemoryProperties: its enums, "invalid"
  size_t alignment = 0, nearest_multiple = 0;
};
// A hybridlab buffer as Halide sees it: `region` first (Halide holds its address), the buffer kept alive with it.
struct Wrapped {
  Region region;
  VkBuffer buffer = VK_NULL_HANDLE;
  BufferPtr buf;
  explicit Wrapped(BufferPtr b) : buffer(b->handle()), buf(std::move(b)) {
    region.handle = &buffer;
    region.size = size_t(buf->size());
  }
};

struct State {
  VkDevice device = VK_NULL_HANDLE;  // the device Halide's runtime was seeded with (none: not yet, or released)
  std::string name;
  Device* dev = nullptr;  // hybridlab's, whose buffer pool serves Halide's device allocations
  std::mutex mu;
  // Halide's device allocations (a pipeline's intermediates): hybridlab buffers, by the region Halide holds.
  std::unordered_map<const void*, std::unique_ptr<Wrapped>> pooled;
  // Every region Halide may hand a kernel (the pooled ones and the tensors Io wrapped): the buffer behind it.
  std::unordered_map<const void*, const Wrapped*> regions;
};
State& state();

// hybridlab's buffer behind a region Halide holds (a buffer's `device` field); null for one hybridlab did not make.
BufferPtr buffer_of(uint64_t device_field);
void add_region(const Wrapped& w);
void remove_region(const Wrapped& w);

// One pipeline call of a halide-vulkan variant (Io::run sets it for the call's duration, on its thread): the device,
// the pipeline's name (names its kernels' hybridlab pipelines) and whether its kernels go on hybridlab's stream
// (tunable halide.vulkan.own_dispatch) or through Halide's runtime between Device::hand_over() and take_back().
struct Call {
  Device* dev = nullptr;
  std::string what;
  bool own = false;
};
class CallScope {
 public:
  CallScope(Device& d, std::string what, bool own);
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

 private:
  const Call* saved_;
  Call call_;
};
const Call* current_call();  // null outside a call
bool own_dispatch(const Device& d);

// ---- Halide's kernel blob, and its SPIR-V made fit for hybridlab's pipelines (tested in test_halide_vulkan.cpp) ----

// One kernel (entry point) of the blob Halide's AOT code hands halide_vulkan_initialize_kernels: the descriptor-set
// metadata Halide's runtime decodes (vk_decode_shader_bindings at v21.0.0) and the SPIR-V module holding it.
struct KernelInfo {
  std::string entry;
  uint32_t entry_index = 0;  // its position among the module's entry points (Halide's descriptor set for it)
  uint32_t uniform_buffers = 0, storage_buffers = 0;
  std::vector<uint32_t> spec_ids;  // the specialization constants it declares
  struct Shared {
    uint32_t constant_id, type_size, array_size;  // constant_id 0: a fixed size
  };
  std::vector<Shared> shared;
  uint32_t local_size_ids[3] = {0, 0, 0};  // 0: fixed in the module
  std::span<const uint32_t> spirv;         // the module (points into the blob)
};
// Every kernel of a blob; Error (one line) on a malformed one.
std::vector<KernelInfo> decode_blob(const char* src, int size);

// The module rewritten for hybridlab's pipeline layout (storage buffers at set 0, bindings 0..N-1, one push-constant
// range): the kernel's descriptor set becomes set 0; its scalar-argument uniform block (binding 0) becomes a
// push-constant block, the buffers' bindings move down by one; a buffer the kernel never stores to is decorated
// NonWritable, so hybridlab's barriers treat it as read only. Error saying why a module cannot be rewritten (a scalar
// argument that is not 32 bits wide: a push-constant block holds no bool).
std::vector<uint32_t> patch_spirv(const KernelInfo& k);

}  // namespace hl::gpu::halide_vk
