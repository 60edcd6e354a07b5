// Buffer allocation (memory type choice, size checks) and the blocking transfer helpers.
#include "runtime/vulkan/buffer.h"

#include "runtime/vulkan/commands.h"
#include "runtime/vulkan/context.h"

#include <fmt/format.h>

#include <cstring>
#include <utility>

namespace hl::vk {
namespace {

uint64_t mib(VkDeviceSize bytes) { return (bytes + (1u << 20) - 1) >> 20; }

// The best memory type for a kind among type_bits, or UINT32_MAX. Device-local buffers avoid
// host-visible (BAR) memory where there is a choice; host buffers prefer cached, non-device memory.
uint32_t choose_memory_type(const VkPhysicalDeviceMemoryProperties& mem, uint32_t type_bits, BufferKind kind) {
  const bool device = kind == BufferKind::DeviceLocal;
  const VkMemoryPropertyFlags required =
      device ? VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT
             : VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  const VkMemoryPropertyFlags avoid =
      device ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  uint32_t best = UINT32_MAX;
  int best_score = -1;
  for (uint32_t i = 0; i < mem.memoryTypeCount; ++i) {
    const VkMemoryPropertyFlags f = mem.memoryTypes[i].propertyFlags;
    if (!(type_bits & (1u << i)) || (f & required) != required) continue;
    int score = (f & avoid) ? 0 : 2;
    if (!device && (f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT)) score += 1;
    if (score > best_score) best = i, best_score = score;
  }
  return best;
}

// Records one transfer between barriers on the context's transfer list and waits for it. The
// barriers order it after earlier GPU work on the buffers and before later work; the list's final
// barrier makes the result visible to the host.
template <class Record>
void run_transfer(Context& ctx, Record&& record) {
  CommandList& cmd = ctx.transfer_commands();
  cmd.reset();
  cmd.transfer_barrier();
  record(cmd);
  cmd.transfer_barrier();
  cmd.submit_and_wait();
}

}  // namespace

uint32_t device_local_memory_type(const Context& ctx, uint32_t type_bits) {
  return choose_memory_type(ctx.memory_properties(), type_bits, BufferKind::DeviceLocal);
}

MemoryBlock::MemoryBlock(Context& ctx, VkDeviceSize size, uint32_t type_bits, std::string name) : ctx_(&ctx), size_(size) {
  const DeviceInfo& d = ctx.info();
  type_ = device_local_memory_type(ctx, type_bits);
  if (type_ == UINT32_MAX) throw Error(fmt::format("memory block '{}': no device-local memory type on {}", name, d.name));
  const VkDeviceSize heap = ctx.memory_properties().memoryHeaps[ctx.memory_properties().memoryTypes[type_].heapIndex].size;
  const std::string oom =
      fmt::format("out of device memory: allocating {} MiB on {} (heap has {} MiB)", mib(size), d.name, mib(heap));
  if (size > heap) throw Error(oom);
  if (d.max_allocation_size && size > d.max_allocation_size)
    throw Error(fmt::format("memory block '{}' of {} MiB exceeds maxMemoryAllocationSize ({} MiB) on {}", name, mib(size),
                            mib(d.max_allocation_size), d.name));
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = size;
  ai.memoryTypeIndex = type_;
  const VkResult r = ctx.fn().vkAllocateMemory(ctx.device(), &ai, nullptr, &memory_);
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY) throw Error(oom);
  check(r, "vkAllocateMemory", fmt::format("{} MiB for memory block '{}'", mib(size), name));
}

MemoryBlock::~MemoryBlock() {
  if (memory_) ctx_->fn().vkFreeMemory(ctx_->device(), memory_, nullptr);
}

Buffer::Buffer(Context& ctx, VkDeviceSize size, const Placement& place, std::string name)
    : s_{.ctx = &ctx, .size = size, .kind = BufferKind::DeviceLocal, .name = std::move(name)} {
  const DeviceInfo& d = ctx.info();
  if (size == 0) throw Error(fmt::format("buffer '{}': size 0 is not allowed", s_.name));
  if (size > d.max_storage_buffer_range)
    throw Error(fmt::format("buffer '{}' of {} MiB exceeds maxStorageBufferRange ({} MiB) on {}", s_.name, mib(size),
                            mib(d.max_storage_buffer_range), d.name));
  const Functions& vk = ctx.fn();
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = size;
  bi.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  try {
    check(vk.vkCreateBuffer(ctx.device(), &bi, nullptr, &s_.buffer), "vkCreateBuffer", s_.name);
    VkMemoryRequirements req{};
    vk.vkGetBufferMemoryRequirements(ctx.device(), s_.buffer, &req);
    auto [block, offset] = place(req);
    if (!block || offset % req.alignment || offset + req.size > block->size() || !(req.memoryTypeBits & (1u << block->type())))
      throw Error(fmt::format("buffer '{}': the placement does not fit its memory requirements", s_.name));
    check(vk.vkBindBufferMemory(ctx.device(), s_.buffer, block->handle(), offset), "vkBindBufferMemory", s_.name);
    s_.block = std::move(block);
  } catch (...) {
    release();
    throw;
  }
}

Buffer::Buffer(Context& ctx, VkDeviceSize size, BufferKind kind, std::string name)
    : s_{.ctx = &ctx, .size = size, .kind = kind, .name = std::move(name)} {
  const DeviceInfo& d = ctx.info();
  const VkPhysicalDeviceMemoryProperties& mem = ctx.memory_properties();
  if (size == 0) throw Error(fmt::format("buffer '{}': size 0 is not allowed", s_.name));

  // Limits first, so an impossible request is a clear error rather than a driver failure.
  uint32_t type = choose_memory_type(mem, ~0u, kind);
  if (type == UINT32_MAX) throw Error(fmt::format("buffer '{}': no suitable memory type on {}", s_.name, d.name));
  const VkDeviceSize heap = mem.memoryHeaps[mem.memoryTypes[type].heapIndex].size;
  const std::string oom =
      fmt::format("out of device memory: allocating {} MiB on {} (heap has {} MiB)", mib(size), d.name, mib(heap));
  if (size > heap) throw Error(oom);
  if (kind != BufferKind::Staging && size > d.max_storage_buffer_range)
    throw Error(fmt::format("buffer '{}' of {} MiB exceeds maxStorageBufferRange ({} MiB) on {}", s_.name, mib(size),
                            mib(d.max_storage_buffer_range), d.name));
  if (d.max_allocation_size && size > d.max_allocation_size)
    throw Error(fmt::format("buffer '{}' of {} MiB exceeds maxMemoryAllocationSize ({} MiB) on {}", s_.name, mib(size),
                            mib(d.max_allocation_size), d.name));

  const Functions& vk = ctx.fn();
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = size;
  bi.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  if (kind != BufferKind::Staging) bi.usage |= VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  try {
    check(vk.vkCreateBuffer(ctx.device(), &bi, nullptr, &s_.buffer), "vkCreateBuffer", s_.name);
    VkMemoryRequirements req{};
    vk.vkGetBufferMemoryRequirements(ctx.device(), s_.buffer, &req);
    type = choose_memory_type(mem, req.memoryTypeBits, kind);
    if (type == UINT32_MAX) throw Error(fmt::format("buffer '{}': no suitable memory type on {}", s_.name, d.name));
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = type;
    VkResult r = vk.vkAllocateMemory(ctx.device(), &ai, nullptr, &s_.memory);
    if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY) throw Error(oom);
    check(r, "vkAllocateMemory", fmt::format("{} MiB for buffer '{}'", mib(size), s_.name));
    check(vk.vkBindBufferMemory(ctx.device(), s_.buffer, s_.memory, 0), "vkBindBufferMemory", s_.name);
    if (kind != BufferKind::DeviceLocal)
      check(vk.vkMapMemory(ctx.device(), s_.memory, 0, VK_WHOLE_SIZE, 0, &s_.mapped), "vkMapMemory", s_.name);
  } catch (...) {
    release();
    throw;
  }
}

Buffer::~Buffer() { release(); }

Buffer::Buffer(Buffer&& o) noexcept : s_(std::exchange(o.s_, {})) {}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) release(), s_ = std::exchange(o.s_, {});
  return *this;
}

void Buffer::release() noexcept {
  if (!s_.ctx) return;
  const Functions& vk = s_.ctx->fn();
  if (s_.buffer) vk.vkDestroyBuffer(s_.ctx->device(), s_.buffer, nullptr);
  if (s_.memory) vk.vkFreeMemory(s_.ctx->device(), s_.memory, nullptr);  // unmaps implicitly
  s_.block.reset();  // a placed buffer's block goes with its last buffer
}

void Buffer::check_range(VkDeviceSize offset, VkDeviceSize bytes, const char* what) const {
  if (!s_.buffer) throw Error(fmt::format("{} on an empty buffer", what));
  if (offset > s_.size || bytes > s_.size - offset)
    throw Error(fmt::format("{} of {} bytes at offset {} overruns buffer '{}' of {} bytes", what, bytes, offset,
                            s_.name, s_.size));
}

void Buffer::upload(const void* data, VkDeviceSize bytes, VkDeviceSize offset) {
  check_range(offset, bytes, "upload");
  if (bytes == 0) return;
  if (s_.mapped) {  // every submission is waited for, so the GPU is not using it now
    std::memcpy(static_cast<char*>(s_.mapped) + offset, data, bytes);
    return;
  }
  Buffer& staging = s_.ctx->staging(bytes);
  std::memcpy(staging.mapped(), data, bytes);
  run_transfer(*s_.ctx, [&](CommandList& cmd) { cmd.copy(staging, *this, bytes, 0, offset); });
}

void Buffer::download(void* data, VkDeviceSize bytes, VkDeviceSize offset) const {
  check_range(offset, bytes, "download");
  if (bytes == 0) return;
  if (s_.mapped) {
    std::memcpy(data, static_cast<const char*>(s_.mapped) + offset, bytes);
    return;
  }
  Buffer& staging = s_.ctx->staging(bytes);
  run_transfer(*s_.ctx, [&](CommandList& cmd) { cmd.copy(*this, staging, bytes, offset, 0); });
  std::memcpy(data, staging.mapped(), bytes);
}

void Buffer::fill_u32(uint32_t value, VkDeviceSize offset, VkDeviceSize bytes) {
  if (bytes == VK_WHOLE_SIZE) bytes = offset <= s_.size ? (s_.size - offset) & ~VkDeviceSize(3) : 0;
  check_range(offset, bytes, "fill_u32");
  if (offset % 4 || bytes % 4)
    throw Error(fmt::format("fill_u32 of buffer '{}': offset and size must be multiples of 4", s_.name));
  if (bytes == 0) return;
  run_transfer(*s_.ctx, [&](CommandList& cmd) { cmd.fill(*this, value, offset, bytes); });
}

void Buffer::copy_from(const Buffer& src, VkDeviceSize bytes, VkDeviceSize src_offset, VkDeviceSize dst_offset) {
  if (bytes == VK_WHOLE_SIZE) bytes = src.size() - std::min(src_offset, src.size());
  src.check_range(src_offset, bytes, "copy source");
  check_range(dst_offset, bytes, "copy destination");
  if (bytes == 0) return;
  run_transfer(*s_.ctx, [&](CommandList& cmd) { cmd.copy(src, *this, bytes, src_offset, dst_offset); });
}

}  // namespace hl::vk
