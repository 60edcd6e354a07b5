// hl::gpu::Device: one Vulkan device used as a compute stream. Ops record dispatches, uploads and copies
// into a command list, submitted without waiting every `device.stream.flush_dispatches` dispatches if set (so the
// GPU runs while the host records the rest; after `device.stream.flush_idle_dispatches` where nothing submitted is
// held, at a prefill step's start: set_idle_submit) and at a download or sync(), which wait for all of them.
// Buffers come from a size-class pool and stay alive until the commands that use them have run.
// Barriers and order: dispatches are queued in a window and recorded when something needs them (a flush, a
// segment cut, a transfer, a timestamp). Each gets a level, one past the deepest queued dispatch it conflicts
// with (it reads or writes a buffer range one of them wrote, or writes one that one of them read; which bindings
// a kernel writes comes from its SPIR-V: vk::spirv_written_bindings). The window is recorded level by level
// with one compute barrier between levels: independent dispatches run together even when the ops issuing them
// are not adjacent (the shared expert beside the routed experts), and conflicting ones keep their order. Every
// command list ends with a barrier when anything was queued, so a list (a captured segment too) never relies
// on what comes before or after it. `device.stream.elide_barriers` 0: every dispatch its own level (a barrier
// between any two, in issue order). `device.stream.reorder` 0: levels never go down, so dispatches keep their
// issue order and a barrier comes only before one that conflicts with the dispatches since the last barrier.
// `device.stream.late` 1 (with reorder): each dispatch recorded at the latest level its dependents in the window allow
// instead of the earliest (the same levels and barriers), so work that nothing needs soon, a shared expert beside
// the routed experts' GEMMs, runs beside the long levels and fills their last wave instead of a short early one.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/vulkan/runtime.h"

namespace hl::gpu {

using BufferPtr = std::shared_ptr<vk::Buffer>;

struct DeviceStats {
  uint64_t dispatches = 0, submits = 0;
  uint64_t barriers = 0;  // compute barriers recorded between dispatches (transfers' barriers not counted)
  uint64_t replayed_barriers = 0;  // those in captured segments submitted again
  uint64_t resident_buffers = 0, resident_blocks = 0, resident_bytes = 0;  // alloc_resident's placements
  uint64_t replayed_dispatches = 0;  // dispatches run again by submitting captured segments (not in `dispatches`)
  uint64_t upload_bytes = 0, download_bytes = 0, uploads = 0, downloads = 0, fills = 0;
  uint64_t copies = 0;  // buffer-to-buffer copies recorded (each between two transfer barriers)
  uint64_t late_moves = 0;  // dispatches recorded at a later level than their earliest (device.stream.late)
};

class Device {
 public:
  explicit Device(const vk::ContextOptions& options = {});
  ~Device();

  vk::Context& ctx() { return *ctx_; }
  const vk::DeviceInfo& info() const { return ctx_->info(); }
  const vk::DeviceProfile& profile() const { return ctx_->profile(); }
  // A kernel tuning parameter "<op>.<variant>.<param>": its default lives in runtime/vulkan/device_profile.cpp.
  uint32_t tune(std::string_view key) const { return profile().get(key); }

  // A device-local buffer of at least `bytes` (pooled; contents undefined).
  BufferPtr alloc(size_t bytes);
  // A device-local buffer of exactly `bytes` for data that lives for the run (weights): placed one after another
  // in blocks of `device.arena.block_mib` MiB (larger for a larger buffer), one VkDeviceMemory per block rather
  // than per tensor. Not pooled; a block is freed when every buffer in it is gone and a newer block took over.
  BufferPtr alloc_resident(size_t bytes);

  // A compute pipeline of an embedded shader with these specialization constants (cached). full_subgroups:
  // every subgroup of a workgroup is full (vk::PipelineDesc; the workgroup size a multiple of the largest
  // subgroup size), as cooperative-matrix kernels need.
  const vk::Pipeline& pipeline(const std::string& shader, const std::vector<vk::SpecConstant>& spec, uint32_t buffers,
                               uint32_t push_bytes, bool full_subgroups = false);
  // The same from SPIR-V made at run time (another compiler's kernels: Halide's): `name` must name this module alone
  // (the cache knows it by name, entry point and constants); `spirv` is read only when the pipeline is made.
  const vk::Pipeline& pipeline(const std::string& name, std::span<const uint32_t> spirv, const std::string& entry,
                               const std::vector<vk::SpecConstant>& spec, uint32_t buffers, uint32_t push_bytes);

  // Queues a dispatch in the window (see above); the buffers stay alive until it has run.
  void dispatch(const vk::Pipeline& p, const std::vector<BufferPtr>& buffers, const void* push, uint32_t push_bytes,
                uint32_t gx, uint32_t gy = 1, uint32_t gz = 1);
  template <class Push>
  void dispatch(const vk::Pipeline& p, const std::vector<BufferPtr>& buffers, const Push& push, uint32_t gx,
                uint32_t gy = 1, uint32_t gz = 1) {
    dispatch(p, buffers, &push, sizeof(Push), gx, gy, gz);
  }

  void upload(const BufferPtr& dst, const void* data, size_t bytes, size_t dst_offset = 0);  // recorded
  // Recorded: dst's first `bytes` (a multiple of 4) set to zero on the device (vkCmdFillBuffer), no host copy and no
  // transfer over the bus (a zero state uploaded from the host is a copy of its size before the first kernel).
  void zero(const BufferPtr& dst, size_t bytes);
  void copy(const BufferPtr& src, const BufferPtr& dst, size_t bytes, size_t src_offset = 0, size_t dst_offset = 0);
  void download(const BufferPtr& src, void* data, size_t bytes, size_t src_offset = 0);  // syncs first
  // Several downloads with one copy each into one staging buffer, one submission and one wait (download() is a
  // round trip per call).
  struct Download {
    BufferPtr src;
    void* data;
    size_t bytes, src_offset = 0;
  };
  void download(const std::vector<Download>& parts);

  // Orders everything queued so far before everything queued after, as a dependence would (a pipeline barrier);
  // for timing ops as a chain of dependent steps (experiment --chain), where nothing links them by data.
  void barrier() { barrier_if_pending(); }
  void sync();   // submits what is recorded and waits for everything submitted
  void flush();  // submits what is recorded without waiting

  // Work that another runtime submits to this device's queue (Halide's Vulkan runtime) between the two:
  // hand_over() submits what is recorded, so it reaches the queue first (its list ends with a barrier, and a
  // barrier's first scope holds everything earlier in submission order); take_back() records a barrier whose first
  // scope holds the other runtime's submissions, so what is recorded next sees what it wrote. Not in a capture.
  void hand_over();
  void take_back();

  // Capture, for replaying a recorded step (decode): between begin_capture() and end_capture() nothing is
  // submitted (no flushes, no drains; sync() is an error) and end_segment() takes what was recorded since the
  // last cut as a Segment: a closed command list plus the buffers it uses, kept alive with it. submit() runs a
  // segment again, in queue order with the stream; sync() also waits for the segments it submitted. A segment may be
  // submitted again while its last submission is still pending (its list is recorded for simultaneous use; each list
  // ends with a barrier, so the two runs keep their order).
  struct Segment {
    std::unique_ptr<vk::CommandList> list;
    std::vector<BufferPtr> held;
    uint64_t dispatches = 0, barriers = 0;  // recorded in it
  };
  void begin_capture();
  std::shared_ptr<Segment> end_segment();  // null when nothing was recorded since the last cut
  void end_capture();
  bool capturing() const { return capturing_; }
  // replayed: count its dispatches in stats().replayed_dispatches (false: its first run, already counted).
  // Queued with the stream: it reaches the GPU at the next flush() (or sync()), in one submission with the
  // stream's commands and other segments (stats().submits counts submissions).
  void submit(const std::shared_ptr<Segment>& s, bool replayed = true);
  // A segment just cut, run now in a submission of its own, during a capture too (nothing else is queued then): the GPU
  // runs the captured step's first segments while the host records the rest. sync() waits for it (a later
  // submission's fence covers the earlier ones on the queue).
  void submit_now(const std::shared_ptr<Segment>& s);

  // GPU time of what record() adds to the stream, from timestamp queries (syncs before and after; recorded
  // as one submission, without the periodic flushes).
  double time_ns(const std::function<void()>& record);
  // A timestamp recorded into the stream now; elapsed_ns(a, b) is valid after the next sync().
  // Query slots are reused cyclically (4096 of them): read results before that many more timestamps.
  uint32_t timestamp();
  double elapsed_ns(uint32_t a, uint32_t b) const;
  // Per-dispatch GPU times (diagnosis: which of a variant's dispatches takes the time). While on, each dispatch is
  // recorded alone between two timestamps (behind a barrier: no overlap with its neighbours, so the times add up to
  // more than the unprofiled run); dispatches in a capture are not profiled. take_dispatch_times() syncs and returns
  // (pipeline name, ns) in issue order since the last take, then forgets them.
  void set_dispatch_profile(bool on) { profile_dispatches_ = on; }
  std::vector<std::pair<std::string, double>> take_dispatch_times();
  // Level scheduling on (the default: device.stream.reorder) or off (issue order), for the dispatches queued next.
  void set_reorder(bool on) { reorder_ = on; }
  bool reorder() const { return reorder_; }
  // Whether an idle stream goes out after device.stream.flush_idle_dispatches dispatches (a step's start: the GPU
  // need not wait for a whole batch's recording); off cuts no window short (decode's level packing stays whole).
  // Initially on where the stream is not reordered.
  void set_idle_submit(bool on) { idle_submit_ = on; }
  const DeviceStats& stats() const { return stats_; }
  void reset_stats() { stats_ = {}; }

 private:
  vk::CommandList& stream();
  BufferPtr pooled(size_t bytes, vk::BufferKind kind);
  void hold(BufferPtr b) { held_.push_back(std::move(b)); }

  std::unique_ptr<vk::Context> ctx_;
  std::unique_ptr<vk::CommandList> stream_;
  std::vector<BufferPtr> held_;  // referenced by the commands recorded into stream_
  struct InFlight {              // a submission and the buffers its commands use, until it has run
    std::unique_ptr<vk::CommandList> list;  // the last list (its fence covers the submission)
    std::vector<BufferPtr> held;
    std::vector<std::unique_ptr<vk::CommandList>> more;  // stream lists submitted before it, with segments between
  };
  std::vector<InFlight> in_flight_;                     // in submission order
  std::vector<std::unique_ptr<vk::CommandList>> spare_;  // finished lists, reset, for reuse
  uint32_t since_flush_ = 0, flush_every_ = 0, flush_idle_ = 0;
  bool capturing_ = false;
  uint64_t cut_dispatches_ = 0, cut_barriers_ = 0;  // stats_.dispatches and .barriers at the last capture cut
  std::vector<std::shared_ptr<Segment>> submitted_;  // segments submitted since the last sync (kept alive until it)
  bool unfenced_ = false;  // submit_now() ran a segment that no fence in in_flight_ covers yet: flush() submits one
  // submit(segment) queues lists for the next flush(): the segments' and the stream's parts before each, in order.
  std::vector<vk::CommandList*> queued_;
  std::vector<std::unique_ptr<vk::CommandList>> queued_stream_;  // the stream's parts among them
  void retire(InFlight& f);  // waits for f, recycles its list, releases its buffers
  std::unique_ptr<vk::TimestampPool> timestamps_;
  uint32_t next_query_ = 0;
  bool profile_dispatches_ = false;
  struct Stamped {
    std::string pipeline;
    uint32_t begin, end;  // timestamp queries
  };
  std::vector<Stamped> dispatch_stamps_;
  std::map<std::string, std::unique_ptr<vk::Pipeline>> pipelines_;
  // Both pipeline()s: the cached pipeline, made on a miss (an empty spirv: the embedded shader `name`).
  const vk::Pipeline& cached_pipeline(const std::string& name, std::span<const uint32_t> spirv, const std::string& entry,
                                      const std::vector<vk::SpecConstant>& spec, uint32_t buffers, uint32_t push_bytes,
                                      bool full_subgroups);
  std::string pipeline_key_;               // pipeline()'s scratch key
  // The window: dispatches queued since the last barrier-forcing point (a flush, a segment cut, a transfer, a
  // timestamp), each with its level; emit_window() records them level by level, a barrier between levels.
  struct Queued {
    const vk::Pipeline* p;
    uint32_t first_range, ranges, push_offset, push_bytes;  // into window_ranges_, window_push_
    uint32_t gx, gy, gz;
    uint32_t level;  // 1 + the deepest level of a queued dispatch it conflicts with
  };
  struct Access {  // a buffer range a queued dispatch reads or writes
    VkBuffer buffer;
    VkDeviceSize begin, end;
    bool write;
    uint32_t level;
    uint32_t q;  // the dispatch's index in window_
  };
  std::vector<Queued> window_;
  std::vector<vk::BufferRange> window_ranges_;
  std::vector<uint8_t> window_push_;
  std::vector<Access> accesses_;
  std::vector<std::pair<uint32_t, uint32_t>> window_edges_;  // (earlier, later) queued dispatches that conflict
  uint32_t levels_ = 0;  // the deepest level queued
  bool elide_barriers_ = true, reorder_ = true, late_ = false, idle_submit_ = false;
  void emit_window();         // records the window (levels in order, barriers between) and empties it
  void place_late();          // device.stream.late: each queued dispatch at the latest level its dependents allow
  void barrier_if_pending();  // emit_window(), then a barrier, if anything was queued
  struct Pool;
  std::shared_ptr<Pool> pool_;
  std::shared_ptr<vk::MemoryBlock> arena_;  // the block alloc_resident fills now
  VkDeviceSize arena_used_ = 0;
  DeviceStats stats_;
};

}  // namespace hl::gpu
