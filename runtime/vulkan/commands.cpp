// CommandList recording and fenced submission; timestamp queries and the timing helper.
#include "runtime/vulkan/commands.h"

#include <array>

#include "runtime/vulkan/context.h"
#include "runtime/vulkan/pipeline.h"

#include <fmt/format.h>

#include <algorithm>

namespace hl::vk {

// ---------------------------------------------------------------------------------------------
// TimestampPool

TimestampPool::TimestampPool(Context& ctx, uint32_t count) : ctx_(&ctx), count_(count) {
  if (ctx.info().timestamp_valid_bits == 0)
    throw Error(fmt::format("timestamps unsupported on this device ({}: timestampValidBits is 0)", ctx.info().name));
  VkQueryPoolCreateInfo ci{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  ci.queryType = VK_QUERY_TYPE_TIMESTAMP;
  ci.queryCount = count;
  check(ctx.fn().vkCreateQueryPool(ctx.device(), &ci, nullptr, &pool_), "vkCreateQueryPool");
}

TimestampPool::~TimestampPool() { ctx_->fn().vkDestroyQueryPool(ctx_->device(), pool_, nullptr); }

std::vector<uint64_t> TimestampPool::ticks(uint32_t first, uint32_t n) const {
  if (first + n > count_)
    throw Error(fmt::format("timestamp queries {}..{} outside a pool of {}", first, first + n, count_));
  std::vector<uint64_t> t(n);
  check(ctx_->fn().vkGetQueryPoolResults(ctx_->device(), pool_, first, n, n * sizeof(uint64_t), t.data(),
                                         sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
        "vkGetQueryPoolResults");
  return t;
}

double TimestampPool::elapsed_ns(uint32_t begin, uint32_t end) const {
  const uint32_t bits = ctx_->info().timestamp_valid_bits;
  const uint64_t mask = bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
  const uint64_t b = ticks(begin, 1)[0], e = ticks(end, 1)[0];
  return double((e - b) & mask) * double(ctx_->info().timestamp_period);
}

// ---------------------------------------------------------------------------------------------
// CommandList

CommandList::CommandList(Context& ctx, std::string name) : ctx_(&ctx), name_(std::move(name)) {
  const Functions& vk = ctx.fn();
  VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pi.queueFamilyIndex = ctx.info().compute_queue_family;
  check(vk.vkCreateCommandPool(ctx.device(), &pi, nullptr, &pool_), "vkCreateCommandPool", name_);
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  try {
    check(vk.vkAllocateCommandBuffers(ctx.device(), &ai, &cmd_), "vkAllocateCommandBuffers", name_);
    check(vk.vkCreateFence(ctx.device(), &fi, nullptr, &fence_), "vkCreateFence", name_);
  } catch (...) {
    vk.vkDestroyCommandPool(ctx.device(), pool_, nullptr);
    throw;
  }
}

CommandList::~CommandList() {
  const Functions& vk = ctx_->fn();
  for (VkDescriptorPool p : descriptor_pools_) vk.vkDestroyDescriptorPool(ctx_->device(), p, nullptr);
  if (fence_) vk.vkDestroyFence(ctx_->device(), fence_, nullptr);
  vk.vkDestroyCommandPool(ctx_->device(), pool_, nullptr);  // frees the command buffer
}

VkCommandBuffer CommandList::recording() {
  if (state_ == State::Executable)
    throw Error(fmt::format("command list '{}' was submitted: reset() it before recording more", name_));
  if (state_ == State::Empty) {
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};  // no ONE_TIME: resubmittable
    if (simultaneous_) bi.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
    check(ctx_->fn().vkBeginCommandBuffer(cmd_, &bi), "vkBeginCommandBuffer", name_);
    state_ = State::Recording;
  }
  return cmd_;
}

void CommandList::close() {
  if (state_ == State::Executable) return;
  // Results become visible to the host once the fence is waited on (mapped buffers, downloads).
  memory_barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                 VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                 VK_ACCESS_HOST_READ_BIT);
  check(ctx_->fn().vkEndCommandBuffer(cmd_), "vkEndCommandBuffer", name_);
  state_ = State::Executable;
}

void CommandList::reset() {
  if (state_ != State::Empty) check(ctx_->fn().vkResetCommandBuffer(cmd_, 0), "vkResetCommandBuffer", name_);
  for (VkDescriptorPool p : descriptor_pools_) ctx_->fn().vkResetDescriptorPool(ctx_->device(), p, 0);
  current_pool_ = 0;
  state_ = State::Empty;
  simultaneous_ = false;
  bound_ = nullptr;
}

VkDescriptorSet CommandList::allocate_set(const Pipeline& pipeline) {
  const Functions& vk = ctx_->fn();
  VkDescriptorSetLayout layout = pipeline.set_layout();
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorSetCount = 1;
  ai.pSetLayouts = &layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  for (;; ++current_pool_) {
    if (current_pool_ == descriptor_pools_.size()) {  // all full: add a pool
      constexpr uint32_t sets = 64;
      VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, sets * std::max(8u, pipeline.buffer_count())};
      VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
      pi.maxSets = sets;
      pi.poolSizeCount = 1;
      pi.pPoolSizes = &size;
      VkDescriptorPool pool = VK_NULL_HANDLE;
      check(vk.vkCreateDescriptorPool(ctx_->device(), &pi, nullptr, &pool), "vkCreateDescriptorPool", name_);
      descriptor_pools_.push_back(pool);
      ai.descriptorPool = pool;
      check(vk.vkAllocateDescriptorSets(ctx_->device(), &ai, &set), "vkAllocateDescriptorSets", name_);
      return set;
    }
    ai.descriptorPool = descriptor_pools_[current_pool_];
    VkResult r = vk.vkAllocateDescriptorSets(ctx_->device(), &ai, &set);
    if (r == VK_SUCCESS) return set;
    if (r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL) check(r, "vkAllocateDescriptorSets", name_);
  }
}

void CommandList::bind(const Pipeline& pipeline, std::span<const BufferRange> buffers) {
  if (buffers.size() != pipeline.buffer_count())
    throw Error(fmt::format("pipeline '{}' takes {} buffers, {} given (in '{}')", pipeline.name(),
                            pipeline.buffer_count(), buffers.size(), name_));
  // Fixed arrays, not vectors: a decode step binds ~800 times, and the host's recording is on its critical path.
  constexpr size_t kMaxBindings = 16;
  if (buffers.size() > kMaxBindings)
    throw Error(fmt::format("pipeline '{}' binds {} buffers, at most {} supported", pipeline.name(), buffers.size(), kMaxBindings));
  std::array<VkDescriptorBufferInfo, kMaxBindings> infos;
  std::array<VkWriteDescriptorSet, kMaxBindings> writes;
  const uint32_t n = uint32_t(buffers.size());
  for (uint32_t i = 0; i < n; ++i) {
    const BufferRange& b = buffers[i];
    if (!b.buffer->handle() || b.buffer->kind() == BufferKind::Staging)
      throw Error(fmt::format("pipeline '{}': buffer '{}' cannot be bound (empty or staging)", pipeline.name(),
                              b.buffer->name()));
    infos[i] = {b.buffer->handle(), b.offset, b.size};
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }

  VkCommandBuffer cmd = recording();
  const Functions& vk = ctx_->fn();
  if (bound_ != &pipeline) vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.handle());
  bound_ = &pipeline;
  if (n == 0) return;
  if (ctx_->push_descriptors()) {  // descriptors live in the command buffer: nothing to manage
    vk.vkCmdPushDescriptorSetKHR(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout(), 0, n, writes.data());
    return;
  }
  VkDescriptorSet set = allocate_set(pipeline);  // kept until reset(), so resubmits stay valid
  for (uint32_t i = 0; i < n; ++i) writes[i].dstSet = set;
  vk.vkUpdateDescriptorSets(ctx_->device(), n, writes.data(), 0, nullptr);
  vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout(), 0, 1, &set, 0, nullptr);
}

void CommandList::push_constants(const void* data, uint32_t bytes, uint32_t offset) {
  if (!bound_) throw Error(fmt::format("push_constants in '{}' before any bind()", name_));
  if (offset + bytes > bound_->push_constant_bytes() || bytes % 4 || offset % 4)
    throw Error(
        fmt::format("pipeline '{}': push constants of {} bytes at {} do not fit its {}-byte range (multiples of 4)",
                    bound_->name(), bytes, offset, bound_->push_constant_bytes()));
  ctx_->fn().vkCmdPushConstants(recording(), bound_->layout(), VK_SHADER_STAGE_COMPUTE_BIT, offset, bytes, data);
}

void CommandList::dispatch(uint32_t x, uint32_t y, uint32_t z) {
  if (!bound_) throw Error(fmt::format("dispatch in '{}' before any bind()", name_));
  const auto& max = ctx_->info().max_workgroup_count;
  if (x > max[0] || y > max[1] || z > max[2])
    throw Error(fmt::format("pipeline '{}': dispatch {}x{}x{} exceeds maxComputeWorkGroupCount {}x{}x{}",
                            bound_->name(), x, y, z, max[0], max[1], max[2]));
  ctx_->fn().vkCmdDispatch(recording(), x, y, z);
}

void CommandList::memory_barrier(VkPipelineStageFlags src, VkAccessFlags src_access, VkPipelineStageFlags dst,
                                 VkAccessFlags dst_access) {
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  b.srcAccessMask = src_access;
  b.dstAccessMask = dst_access;
  ctx_->fn().vkCmdPipelineBarrier(recording(), src, dst, 0, 1, &b, 0, nullptr, 0, nullptr);
}

void CommandList::barrier() {
  memory_barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                 VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
}

void CommandList::transfer_barrier() {
  constexpr VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  memory_barrier(stages, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, stages,
                 VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                     VK_ACCESS_TRANSFER_WRITE_BIT);
}

void CommandList::fill(const Buffer& buffer, uint32_t value, VkDeviceSize offset, VkDeviceSize bytes) {
  ctx_->fn().vkCmdFillBuffer(recording(), buffer.handle(), offset, bytes, value);
}

void CommandList::copy(const Buffer& src, const Buffer& dst, VkDeviceSize bytes, VkDeviceSize src_offset,
                       VkDeviceSize dst_offset) {
  VkBufferCopy region{src_offset, dst_offset, bytes};
  ctx_->fn().vkCmdCopyBuffer(recording(), src.handle(), dst.handle(), 1, &region);
}

void CommandList::reset_timestamps(TimestampPool& pool, uint32_t first, uint32_t count) {
  ctx_->fn().vkCmdResetQueryPool(recording(), pool.handle(), first, count);
}

void CommandList::write_timestamp(TimestampPool& pool, uint32_t query, VkPipelineStageFlagBits stage) {
  ctx_->fn().vkCmdWriteTimestamp(recording(), stage, pool.handle(), query);
}

void CommandList::submit_and_wait(std::chrono::milliseconds timeout) {
  CommandList* self = this;
  submit_and_wait(std::span<CommandList* const>(&self, 1), timeout);
}

namespace {

Error device_lost(const Context& ctx, const std::string& names) {
  return Error(fmt::format("device lost while running {} on {}", names, ctx.info().name));
}

void wait_fence(Context& ctx, VkFence fence, const std::string& names, std::chrono::milliseconds timeout) {
  const VkResult r = ctx.fn().vkWaitForFences(ctx.device(), 1, &fence, VK_TRUE,
                                              uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count()));
  if (r == VK_TIMEOUT)
    throw Error(
        fmt::format("GPU work {} did not finish within {} ms on {} (VK_TIMEOUT): the device may be hung; "
                    "wait_idle() before touching its buffers again",
                    names, timeout.count(), ctx.info().name));
  if (r == VK_ERROR_DEVICE_LOST) throw device_lost(ctx, names);
  check(r, "vkWaitForFences", names);
}

}  // namespace

void CommandList::submit_and_wait(std::span<CommandList* const> lists, std::chrono::milliseconds timeout) {
  if (lists.empty()) return;
  submit(lists);
  lists.back()->wait(timeout);
}

void CommandList::submit(std::span<CommandList* const> lists) {
  if (lists.empty()) return;
  CommandList& last = *lists.back();
  Context& ctx = *last.ctx_;
  const Functions& vk = ctx.fn();
  std::vector<VkCommandBuffer> cmds;
  std::string names;
  for (CommandList* l : lists) {
    if (l->state_ == State::Empty) l->recording();  // an empty list still submits (and waits) fine
    l->close();
    cmds.push_back(l->cmd_);
    if (names.size() < 200) names += (names.empty() ? "'" : ", '") + l->name_ + "'";
  }
  // Reset here rather than after the wait, so that a list whose wait timed out can be submitted again
  // once the context is idle (Context::wait_idle).
  check(vk.vkResetFences(ctx.device(), 1, &last.fence_), "vkResetFences", names);
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = uint32_t(cmds.size());
  si.pCommandBuffers = cmds.data();
  const VkResult r = vk.vkQueueSubmit(ctx.queue(), 1, &si, last.fence_);
  if (r == VK_ERROR_DEVICE_LOST) throw device_lost(ctx, names);
  check(r, "vkQueueSubmit", names);
}

void CommandList::submit() {
  CommandList* self = this;
  submit(std::span<CommandList* const>(&self, 1));
}

void CommandList::wait(std::chrono::milliseconds timeout) { wait_fence(*ctx_, fence_, "'" + name_ + "'", timeout); }

// ---------------------------------------------------------------------------------------------
// Timing

std::vector<double> time_command_list(Context& ctx, CommandList& work, int warmup, int runs,
                                      std::chrono::milliseconds timeout) {
  TimestampPool pool(ctx, 2);
  CommandList begin(ctx, "timer begin"), end(ctx, "timer end");
  begin.reset_timestamps(pool, 0, 2);
  begin.write_timestamp(pool, 0, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT);
  end.write_timestamp(pool, 1, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT);  // after all of `work` completes
  for (int i = 0; i < warmup; ++i) work.submit_and_wait(timeout);
  std::vector<double> samples;
  CommandList* lists[] = {&begin, &work, &end};
  for (int i = 0; i < runs; ++i) {
    CommandList::submit_and_wait(lists, timeout);
    samples.push_back(pool.elapsed_ns(0, 1));
  }
  return samples;
}

}  // namespace hl::vk
