// Recording, submission and GPU timing. A CommandList is recorded once and may be submitted many
// times (benchmarks, decode replay); every submission waits on a fence with a timeout, so a hung GPU
// is an Error, never a hang. Timestamps give device time, independent of host overheads.
#pragma once

#include "runtime/vulkan/buffer.h"
#include "runtime/vulkan/loader.h"

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace hl::vk {

class Context;
class Pipeline;

inline constexpr std::chrono::milliseconds default_timeout = std::chrono::seconds(60);

// Timestamp queries of the context's compute queue.
class TimestampPool {
 public:
  // Error "timestamps unsupported on this device" when the queue family has no valid bits.
  TimestampPool(Context& ctx, uint32_t count);
  ~TimestampPool();
  TimestampPool(const TimestampPool&) = delete;
  TimestampPool& operator=(const TimestampPool&) = delete;

  VkQueryPool handle() const { return pool_; }
  uint32_t count() const { return count_; }
  std::vector<uint64_t> ticks(uint32_t first, uint32_t n) const;  // waits for the results
  // Nanoseconds from query `begin` to query `end`: ticks masked to timestampValidBits (so a wrap
  // between the two is harmless), times timestampPeriod.
  double elapsed_ns(uint32_t begin, uint32_t end) const;

 private:
  Context* ctx_;
  VkQueryPool pool_ = VK_NULL_HANDLE;
  uint32_t count_;
};

class CommandList {
 public:
  explicit CommandList(Context& ctx, std::string name = "commands");
  ~CommandList();
  CommandList(const CommandList&) = delete;
  CommandList& operator=(const CommandList&) = delete;

  const std::string& name() const { return name_; }
  VkCommandBuffer handle() const { return cmd_; }
  bool empty() const { return state_ == State::Empty; }
  // Before the first command: the list may be pending on the queue more than once (a replayed decode step's segment
  // submitted for the next step before the last has run). Cleared by reset().
  void set_simultaneous(bool on) { simultaneous_ = on; }

  // Recording starts with the first command. After a submit the list is closed: reset() to re-record.
  // bind: buffers in binding order 0..N-1, as many as the pipeline declares.
  void bind(const Pipeline& pipeline, std::span<const BufferRange> buffers);
  void bind(const Pipeline& pipeline, std::initializer_list<BufferRange> buffers) {
    bind(pipeline, std::span<const BufferRange>(buffers.begin(), buffers.size()));
  }
  void push_constants(const void* data, uint32_t bytes, uint32_t offset = 0);  // to the bound pipeline
  template <class T>
  void push_constants(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>, "push constants are raw bytes");
    push_constants(&value, sizeof(T));
  }
  void dispatch(uint32_t groups_x, uint32_t groups_y = 1, uint32_t groups_z = 1);
  void barrier();           // compute writes before -> compute reads/writes after (dependent dispatches)
  void transfer_barrier();  // compute/transfer writes before -> compute/transfer reads/writes after
  void fill(const Buffer& buffer, uint32_t value, VkDeviceSize offset = 0, VkDeviceSize bytes = VK_WHOLE_SIZE);
  void copy(const Buffer& src, const Buffer& dst, VkDeviceSize bytes, VkDeviceSize src_offset = 0,
            VkDeviceSize dst_offset = 0);
  void reset_timestamps(TimestampPool& pool, uint32_t first, uint32_t count);  // before writing them
  void write_timestamp(TimestampPool& pool, uint32_t query,
                       VkPipelineStageFlagBits stage = VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT);

  // Closes the recording (with a final barrier that makes results visible to the host), submits and
  // waits. Error on timeout or device loss (after a timeout, Context::wait_idle() before reusing
  // anything the list touches). The commands stay recorded for the next submit.
  void submit_and_wait(std::chrono::milliseconds timeout = default_timeout);
  // Several lists in one submission, in order (e.g. timestamp, work, timestamp).
  static void submit_and_wait(std::span<CommandList* const> lists, std::chrono::milliseconds timeout = default_timeout);
  // Closes and submits without waiting (the GPU starts while the host records the next list); wait()
  // then blocks until it has run, with submit_and_wait's errors. Lists submitted to the one queue run in
  // submission order, and the barrier each dispatch ends with orders them across lists too.
  void submit();
  // Several lists in one vkQueueSubmit, in order, without waiting: the fence is the last list's, so wait() on
  // the last list waits for all of them (a fence signal covers everything earlier in submission order); the
  // others' wait() does not apply to this submission.
  static void submit(std::span<CommandList* const> lists);
  void wait(std::chrono::milliseconds timeout = default_timeout);
  void reset();  // drops the recorded commands and their descriptor sets

 private:
  enum class State { Empty, Recording, Executable };
  VkCommandBuffer recording();  // begins if needed; Error once closed
  void close();
  void memory_barrier(VkPipelineStageFlags src, VkAccessFlags src_access, VkPipelineStageFlags dst,
                      VkAccessFlags dst_access);
  VkDescriptorSet allocate_set(const Pipeline& pipeline);

  Context* ctx_;
  std::string name_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  State state_ = State::Empty;
  bool simultaneous_ = false;
  const Pipeline* bound_ = nullptr;
  std::vector<VkDescriptorPool> descriptor_pools_;  // without push descriptors; reset by reset()
  size_t current_pool_ = 0;
};

// Times a recorded list: `warmup` plain submits, then `runs` submits each bracketed by timestamps.
// Returns one sample (ns) per run; callers take the median/min/max.
std::vector<double> time_command_list(Context& ctx, CommandList& work, int warmup = 2, int runs = 10,
                                      std::chrono::milliseconds timeout = default_timeout);

inline uint32_t div_up(uint32_t n, uint32_t d) { return (n + d - 1) / d; }

}  // namespace hl::vk
