// Buffers: one VkBuffer with its own VkDeviceMemory (simple and enough for a few hundred tensors),
// size limits checked before Vulkan is asked, and blocking helpers to move data in and out.
#pragma once

#include "runtime/vulkan/loader.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <ranges>
#include <span>
#include <string>
#include <vector>

namespace hl::vk {

class Context;

enum class BufferKind {
  DeviceLocal,  // storage + transfer src/dst in device memory; filled through the staging buffer
  HostVisible,  // storage + transfer, host-coherent and persistently mapped (readback, small inputs)
  Staging,      // host-coherent, mapped, transfer only: no shader access, so no storage-range limit
};

// One VkDeviceMemory of device-local memory that buffers are placed in (Buffer's placing constructor): many
// tensors in one allocation. Freed when the last buffer placed in it (and its owner) let go.
class MemoryBlock {
 public:
  // Errors as Buffer's: out of device memory, beyond maxMemoryAllocationSize.
  MemoryBlock(Context& ctx, VkDeviceSize size, uint32_t type_bits, std::string name = "block");
  ~MemoryBlock();
  MemoryBlock(const MemoryBlock&) = delete;
  MemoryBlock& operator=(const MemoryBlock&) = delete;
  VkDeviceMemory handle() const { return memory_; }
  VkDeviceSize size() const { return size_; }
  uint32_t type() const { return type_; }

 private:
  Context* ctx_;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  VkDeviceSize size_;
  uint32_t type_ = 0;
};

// Where a placed buffer goes: given its memory requirements, a block and an offset (aligned, within the block).
using Placement = std::function<std::pair<std::shared_ptr<MemoryBlock>, VkDeviceSize>(const VkMemoryRequirements&)>;

// The device-local memory type a buffer of these requirements' type bits takes (as Buffer chooses it).
uint32_t device_local_memory_type(const Context& ctx, uint32_t type_bits);

class Buffer {
 public:
  Buffer() = default;
  // Errors: "out of device memory: allocating N MiB on <device> (heap has M MiB)" and limit violations.
  Buffer(Context& ctx, VkDeviceSize size, BufferKind kind, std::string name = "buffer");
  // A device-local buffer placed in a block that `place` picks (no memory of its own; it keeps the block alive).
  Buffer(Context& ctx, VkDeviceSize size, const Placement& place, std::string name = "buffer");
  ~Buffer();
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  VkBuffer handle() const { return s_.buffer; }
  VkDeviceSize size() const { return s_.size; }
  BufferKind kind() const { return s_.kind; }
  const std::string& name() const { return s_.name; }
  Context& context() const { return *s_.ctx; }
  void* mapped() const { return s_.mapped; }  // nullptr for DeviceLocal

  // Blocking transfers (they wait for the GPU). Offsets and sizes in bytes.
  void upload(const void* data, VkDeviceSize bytes, VkDeviceSize offset = 0);
  void download(void* data, VkDeviceSize bytes, VkDeviceSize offset = 0) const;
  template <std::ranges::contiguous_range R>
  void upload(const R& data, VkDeviceSize offset = 0) {
    upload(std::ranges::data(data), std::ranges::size(data) * sizeof(std::ranges::range_value_t<R>), offset);
  }
  template <class T>
  std::vector<T> download() const {  // the whole buffer as T
    std::vector<T> out(s_.size / sizeof(T));
    download(out.data(), out.size() * sizeof(T));
    return out;
  }
  // vkCmdFillBuffer: offset and bytes multiples of 4 (VK_WHOLE_SIZE: to the end).
  void fill_u32(uint32_t value, VkDeviceSize offset = 0, VkDeviceSize bytes = VK_WHOLE_SIZE);
  void zero() { fill_u32(0); }
  void copy_from(const Buffer& src, VkDeviceSize bytes = VK_WHOLE_SIZE, VkDeviceSize src_offset = 0,
                 VkDeviceSize dst_offset = 0);

 private:
  void release() noexcept;
  void check_range(VkDeviceSize offset, VkDeviceSize bytes, const char* what) const;

  struct State {  // all a move hands over, leaving an empty buffer behind
    Context* ctx = nullptr;
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkDeviceSize size = 0;
    BufferKind kind = BufferKind::DeviceLocal;
    std::string name;
    void* mapped = nullptr;
    std::shared_ptr<MemoryBlock> block;  // placed buffers: the block they live in (memory stays null)
  } s_;
};

// A buffer (or a part of one) bound to a shader binding.
struct BufferRange {
  BufferRange(const Buffer& b) : buffer(&b), offset(0), size(VK_WHOLE_SIZE) {}  // NOLINT: implicit on purpose
  BufferRange(const Buffer& b, VkDeviceSize offset_, VkDeviceSize size_) : buffer(&b), offset(offset_), size(size_) {}
  const Buffer* buffer;
  VkDeviceSize offset, size;
};

}  // namespace hl::vk
