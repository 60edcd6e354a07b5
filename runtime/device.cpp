#include "runtime/device.h"

#include <fmt/format.h>

#include <bit>
#include <cstring>

#include "common.h"

namespace hl::gpu {

// Free buffers by size class (powers of two, at least 256 bytes), each kind separately.
struct Device::Pool {
  std::map<std::pair<int, size_t>, std::vector<std::unique_ptr<vk::Buffer>>> free;
};

Device::Device(const vk::ContextOptions& options) : ctx_(vk::Context::create(options)), pool_(std::make_shared<Pool>()) {
  flush_every_ = tune("device.stream.flush_dispatches");
  flush_idle_ = tune("device.stream.flush_idle_dispatches");
  elide_barriers_ = tune("device.stream.elide_barriers") != 0;
  reorder_ = tune("device.stream.reorder") != 0;
  idle_submit_ = !reorder_;
  late_ = tune("device.stream.late") != 0;
}

Device::~Device() {
  try {
    sync();
  } catch (...) {
  }
  held_.clear();
  in_flight_.clear();
  pool_->free.clear();
}

BufferPtr Device::alloc(size_t bytes) { return pooled(bytes, vk::BufferKind::DeviceLocal); }

BufferPtr Device::alloc_resident(size_t bytes) {
  const auto place = [&](const VkMemoryRequirements& req) -> std::pair<std::shared_ptr<vk::MemoryBlock>, VkDeviceSize> {
    if (arena_ && (req.memoryTypeBits & (1u << arena_->type()))) {
      const VkDeviceSize at = (arena_used_ + req.alignment - 1) / req.alignment * req.alignment;
      if (at + req.size <= arena_->size()) {
        arena_used_ = at + req.size;
        return {arena_, at};
      }
    }
    VkDeviceSize block = std::max<VkDeviceSize>(req.size, VkDeviceSize(tune("device.arena.block_mib")) << 20);
    if (info().max_allocation_size) block = std::max(req.size, std::min(block, info().max_allocation_size));
    arena_ = std::make_shared<vk::MemoryBlock>(*ctx_, block, req.memoryTypeBits, "arena");
    arena_used_ = req.size;
    ++stats_.resident_blocks;
    return {arena_, 0};
  };
  auto b = std::make_shared<vk::Buffer>(*ctx_, std::max<size_t>(bytes, 4), place, "resident");
  ++stats_.resident_buffers;
  stats_.resident_bytes += bytes;
  return b;
}

BufferPtr Device::pooled(size_t bytes, vk::BufferKind kind) {
  const size_t size = std::bit_ceil(std::max<size_t>(bytes, 256));
  auto& list = pool_->free[{int(kind), size}];
  std::unique_ptr<vk::Buffer> b;
  if (list.empty() && !capturing_ && size >= (size_t(tune("device.pool.drain_mib")) << 20) &&
      (!held_.empty() || !in_flight_.empty())) {
    // A large buffer the pool lacks: first let the recorded and submitted work finish, so that the buffers it
    // alone still held come back (prefill chunks with no flushing otherwise grow without bound: 40 layers of
    // dequantized expert stacks exhausted the H200's 141 GB).
    sync();
  }
  if (!list.empty()) {
    b = std::move(list.back());
    list.pop_back();
  } else {
    b = std::make_unique<vk::Buffer>(*ctx_, size, kind, kind == vk::BufferKind::DeviceLocal ? "tensor" : "staging");
  }
  std::weak_ptr<Pool> home = pool_;
  return BufferPtr(b.release(), [home, kind, size](vk::Buffer* p) {
    if (auto pl = home.lock()) pl->free[{int(kind), size}].emplace_back(p);
    else delete p;
  });
}

const vk::Pipeline& Device::pipeline(const std::string& shader, const std::vector<vk::SpecConstant>& spec,
                                     uint32_t buffers, uint32_t push_bytes, bool full_subgroups) {
  return cached_pipeline(shader, {}, "main", spec, buffers, push_bytes, full_subgroups);
}

const vk::Pipeline& Device::pipeline(const std::string& name, std::span<const uint32_t> spirv, const std::string& entry,
                                     const std::vector<vk::SpecConstant>& spec, uint32_t buffers, uint32_t push_bytes) {
  if (spirv.empty()) fail("pipeline '{}': no SPIR-V", name);
  return cached_pipeline(name, spirv, entry, spec, buffers, push_bytes, false);
}

const vk::Pipeline& Device::cached_pipeline(const std::string& name, std::span<const uint32_t> spirv,
                                            const std::string& entry, const std::vector<vk::SpecConstant>& spec,
                                            uint32_t buffers, uint32_t push_bytes, bool full_subgroups) {
  // The key: the name and entry point, then each constant's id and raw 4 bytes (plus its type index), in a reused
  // string, so a lookup that hits allocates nothing (a decode step looks up ~800 pipelines).
  std::string& key = pipeline_key_;
  key.assign(name);
  if (entry != "main") key.append(1, '\0').append(entry);  // names hold no NUL: no two keys meet
  key.push_back(full_subgroups ? '!' : '|');
  for (auto& s : spec) {
    uint32_t bits = 0;
    std::visit([&](auto v) { std::memcpy(&bits, &v, 4); }, s.value);
    const uint32_t word[3] = {s.id, uint32_t(s.value.index()), bits};
    key.append(reinterpret_cast<const char*>(word), sizeof word);
  }
  auto it = pipelines_.find(key);
  if (it == pipelines_.end()) it = pipelines_.emplace(key, nullptr).first;
  auto& slot = it->second;
  if (!slot) {
    vk::PipelineDesc d;
    d.name = name;
    d.spirv = spirv.empty() ? vk::embedded_spirv(name) : spirv;
    d.entry = entry;
    d.buffers = buffers;
    d.push_constant_bytes = push_bytes;
    d.spec = spec;
    d.full_subgroups = full_subgroups;
    slot = std::make_unique<vk::Pipeline>(*ctx_, d);
  }
  return *slot;
}

vk::CommandList& Device::stream() {
  if (!stream_) {
    if (!spare_.empty()) {
      stream_ = std::move(spare_.back());
      spare_.pop_back();
    } else {
      stream_ = std::make_unique<vk::CommandList>(*ctx_, "stream");
    }
    stream_->set_simultaneous(capturing_);  // a captured segment may be pending more than once (submit())
  }
  return *stream_;
}

void Device::dispatch(const vk::Pipeline& p, const std::vector<BufferPtr>& buffers, const void* push,
                      uint32_t push_bytes, uint32_t gx, uint32_t gy, uint32_t gz) {
  const bool stamped = profile_dispatches_ && !capturing_;
  // Profiled: a stamp before (behind what is queued) and after (behind this dispatch alone); a query slot is
  // reused after 4096 stamps, so at most 2000 dispatches are kept between two takes.
  const uint32_t begin = stamped && dispatch_stamps_.size() < 2000 ? timestamp() : ~0u;
  // Queued in the window, not recorded yet: its level is one past the deepest queued dispatch it conflicts with
  // (reads or writes a range one of them wrote, or writes one they read); emit_window() records level by level.
  const uint32_t written = p.written_bindings();
  Queued q{&p, uint32_t(window_ranges_.size()), uint32_t(buffers.size()), uint32_t(window_push_.size()), push_bytes,
           gx, gy, gz, elide_barriers_ ? 1u : levels_ + 1u};
  const size_t first_access = accesses_.size();
  for (size_t i = 0; i < buffers.size(); ++i) {
    const vk::Buffer& b = *buffers[i];
    window_ranges_.emplace_back(b);
    hold(buffers[i]);
    const uint32_t qi = uint32_t(window_.size());
    const Access a{b.handle(), 0, b.size(), (written >> i & 1u) != 0, 0, qi};
    for (size_t k = 0; k < first_access; ++k) {  // the window's earlier dispatches only
      const Access& x = accesses_[k];
      if ((x.write || a.write) && x.buffer == a.buffer && x.begin < a.end && a.begin < x.end) {
        q.level = std::max(q.level, x.level + 1u);
        if (late_) window_edges_.emplace_back(x.q, qi);
      }
    }
    if (!reorder_) q.level = std::max(q.level, levels_);  // issue order: never below the deepest level
    accesses_.push_back(a);
  }
  for (size_t k = first_access; k < accesses_.size(); ++k) accesses_[k].level = q.level;
  if (push_bytes) {
    const auto* bytes = static_cast<const uint8_t*>(push);
    window_push_.insert(window_push_.end(), bytes, bytes + push_bytes);
  }
  if (q.level > levels_) {  // a new level: a barrier will separate it from the one before
    if (levels_ > 0) ++stats_.barriers;
    levels_ = q.level;
  }
  window_.push_back(q);
  ++stats_.dispatches;
  if (begin != ~0u) dispatch_stamps_.push_back({p.name(), begin, timestamp()});
  if (flush_every_ && !capturing_ &&
      (++since_flush_ >= flush_every_ || (flush_idle_ && idle_submit_ && in_flight_.empty() && since_flush_ >= flush_idle_)))
    flush();
}

std::vector<std::pair<std::string, double>> Device::take_dispatch_times() {
  sync();
  std::vector<std::pair<std::string, double>> out;
  for (const Stamped& d : dispatch_stamps_) out.emplace_back(d.pipeline, elapsed_ns(d.begin, d.end));
  dispatch_stamps_.clear();
  return out;
}

void Device::emit_window() {
  if (window_.empty()) return;
  if (late_ && reorder_ && elide_barriers_) place_late();
  window_edges_.clear();
  auto& s = stream();
  std::stable_sort(window_.begin(), window_.end(), [](const Queued& a, const Queued& b) { return a.level < b.level; });
  uint32_t level = window_.front().level;
  for (const Queued& q : window_) {
    if (q.level != level) {
      s.barrier();  // counted when the level opened (dispatch())
      level = q.level;
    }
    s.bind(*q.p, std::span<const vk::BufferRange>(window_ranges_.data() + q.first_range, q.ranges));
    if (q.push_bytes) s.push_constants(window_push_.data() + q.push_offset, q.push_bytes);
    s.dispatch(q.gx, q.gy, q.gz);
  }
  window_.clear();
  window_ranges_.clear();
  window_push_.clear();
  accesses_.clear();
  levels_ = 0;
}

// Each queued dispatch to the latest level before its earliest-placed dependent (the deepest level where it has
// none): the edges run from earlier to later dispatches, so walking them backwards finalises a dispatch's level
// before any edge out of an earlier one reads it. Dispatches on the longest chain keep their levels, so the levels
// and the barriers between them stay the same.
void Device::place_late() {
  std::vector<uint32_t> late(window_.size(), levels_);
  for (size_t e = window_edges_.size(); e-- > 0;) {
    const auto [from, to] = window_edges_[e];
    late[from] = std::min(late[from], late[to] - 1u);
  }
  for (size_t i = 0; i < window_.size(); ++i)
    if (late[i] > window_[i].level) {
      window_[i].level = late[i];
      ++stats_.late_moves;
    }
}

void Device::barrier_if_pending() {
  if (window_.empty()) return;
  emit_window();
  stream().barrier();
  ++stats_.barriers;
}

void Device::upload(const BufferPtr& dst, const void* data, size_t bytes, size_t dst_offset) {
  if (bytes == 0) return;
  BufferPtr staging = pooled(bytes, vk::BufferKind::Staging);
  std::memcpy(staging->mapped(), data, bytes);
  hold(staging);
  hold(dst);
  emit_window();
  auto& s = stream();
  s.transfer_barrier();  // earlier dispatches' reads and writes of dst come first (and every other access)
  s.copy(*staging, *dst, bytes, 0, dst_offset);
  s.transfer_barrier();
  stats_.upload_bytes += bytes;
  ++stats_.uploads;
}

void Device::zero(const BufferPtr& dst, size_t bytes) {
  if (bytes == 0) return;
  if (bytes % 4) fail("Device::zero: {} bytes, not a multiple of 4", bytes);
  hold(dst);
  emit_window();
  auto& s = stream();
  s.transfer_barrier();  // earlier dispatches' reads and writes of dst come first
  s.fill(*dst, 0u, 0, bytes);
  s.transfer_barrier();
  ++stats_.fills;
}

void Device::copy(const BufferPtr& src, const BufferPtr& dst, size_t bytes, size_t src_offset, size_t dst_offset) {
  if (bytes == 0) return;
  ++stats_.copies;
  hold(src);
  hold(dst);
  emit_window();
  auto& s = stream();
  s.transfer_barrier();  // dispatch barriers cover compute only: make their writes visible to the copy
  s.copy(*src, *dst, bytes, src_offset, dst_offset);
  s.transfer_barrier();
}

void Device::download(const BufferPtr& src, void* data, size_t bytes, size_t src_offset) {
  if (bytes == 0) return;
  BufferPtr staging = pooled(bytes, vk::BufferKind::Staging);
  hold(src);
  hold(staging);
  emit_window();
  stream().transfer_barrier();  // orders every earlier access before the copy and what follows
  stream().copy(*src, *staging, bytes, src_offset, 0);
  sync();
  std::memcpy(data, staging->mapped(), bytes);
  stats_.download_bytes += bytes;
  ++stats_.downloads;
}

void Device::download(const std::vector<Download>& parts) {
  size_t total = 0;
  for (const Download& p : parts) total += p.bytes;
  if (total == 0) return;
  BufferPtr staging = pooled(total, vk::BufferKind::Staging);
  hold(staging);
  emit_window();
  stream().transfer_barrier();  // orders every earlier access before the copies and what follows
  size_t at = 0;
  for (const Download& p : parts) {
    if (p.bytes == 0) continue;
    hold(p.src);
    stream().copy(*p.src, *staging, p.bytes, p.src_offset, at);
    at += p.bytes;
  }
  sync();
  at = 0;
  for (const Download& p : parts) {
    std::memcpy(p.data, static_cast<const char*>(staging->mapped()) + at, p.bytes);
    at += p.bytes;
  }
  stats_.download_bytes += total;
  stats_.downloads += parts.size();
}

uint32_t Device::timestamp() {
  constexpr uint32_t kQueries = 4096;
  if (!timestamps_) timestamps_ = std::make_unique<vk::TimestampPool>(*ctx_, kQueries);
  const uint32_t q = next_query_;
  next_query_ = (next_query_ + 1) % kQueries;
  barrier_if_pending();  // what is timed before the stamp has finished (per-op profiling stays per op)
  stream().reset_timestamps(*timestamps_, q, 1);
  stream().write_timestamp(*timestamps_, q);
  return q;
}

double Device::elapsed_ns(uint32_t a, uint32_t b) const {
  if (!timestamps_) fail("no timestamps were recorded");
  return timestamps_->elapsed_ns(a, b);
}

double Device::time_ns(const std::function<void()>& record) {
  sync();
  const uint32_t keep = flush_every_;
  flush_every_ = 0;  // one submission: the GPU time of the work alone, not of the host recording it
  const uint32_t a = timestamp();
  record();
  const uint32_t b = timestamp();
  flush_every_ = keep;
  sync();
  return elapsed_ns(a, b);
}

void Device::flush() {
  since_flush_ = 0;
  if (capturing_) return;  // a capture keeps everything for end_segment()
  if (queued_.empty() && window_.empty() && (!stream_ || stream_->empty()) && !unfenced_) return;
  unfenced_ = false;
  barrier_if_pending();  // the list ends ordered: what follows it never needs to know what it did
  // One vkQueueSubmit for the queued lists and the stream: its fence (the stream list's, the last) covers them all.
  std::vector<vk::CommandList*> lists = queued_;
  lists.push_back(&stream());
  vk::CommandList::submit(lists);
  ++stats_.submits;
  in_flight_.push_back({std::move(stream_), std::move(held_), std::move(queued_stream_)});
  held_.clear();
  queued_.clear();
  queued_stream_.clear();
  // Bound what is queued (command buffers, held buffers): beyond 16 submissions, wait for the oldest.
  if (in_flight_.size() > 16) {
    retire(in_flight_.front());
    in_flight_.erase(in_flight_.begin());
  }
}

void Device::retire(InFlight& f) {
  f.list->wait();
  f.list->reset();
  spare_.push_back(std::move(f.list));
  for (auto& l : f.more) {
    l->reset();
    spare_.push_back(std::move(l));
  }
  f.more.clear();
  f.held.clear();
}

void Device::begin_capture() {
  sync();
  capturing_ = true;
  cut_dispatches_ = stats_.dispatches;
  cut_barriers_ = stats_.barriers;
}

std::shared_ptr<Device::Segment> Device::end_segment() {
  if (!capturing_) fail("Device::end_segment outside a capture");
  barrier_if_pending();
  if (!stream_ || stream_->empty()) return nullptr;  // a segment ends ordered, so replaying it anywhere needs nothing from its neighbours
  auto seg = std::make_shared<Segment>(Segment{std::move(stream_), std::move(held_), stats_.dispatches - cut_dispatches_,
                                               stats_.barriers - cut_barriers_});
  held_.clear();
  cut_dispatches_ = stats_.dispatches;
  cut_barriers_ = stats_.barriers;
  return seg;
}

void Device::end_capture() {
  if (!window_.empty() || (stream_ && !stream_->empty())) fail("Device::end_capture: commands recorded after the last end_segment()");
  capturing_ = false;
}

void Device::submit(const std::shared_ptr<Segment>& s, bool replayed) {
  if (capturing_) fail("Device::submit(segment) during a capture");
  // Queued behind what the stream holds, not submitted on its own: a replayed step's segments and live ops go to
  // the GPU in a few vkQueueSubmits (at flush(), every device.stream.flush_dispatches dispatches) rather than one
  // per segment (dozens of submissions per decode token, slower than recording the step anew).
  barrier_if_pending();  // the stream's part ends ordered, as a segment does
  if (stream_ && !stream_->empty()) {
    queued_.push_back(stream_.get());
    queued_stream_.push_back(std::move(stream_));
  }
  queued_.push_back(s->list.get());
  if (replayed) stats_.replayed_dispatches += s->dispatches, stats_.replayed_barriers += s->barriers;
  submitted_.push_back(s);
  since_flush_ += uint32_t(s->dispatches);
  if (flush_every_ && since_flush_ >= flush_every_) flush();
}

void Device::submit_now(const std::shared_ptr<Segment>& s) {
  if (!queued_.empty() || !window_.empty() || (stream_ && !stream_->empty()))
    fail("Device::submit_now: commands are queued or recorded ahead of the segment");
  vk::CommandList* list = s->list.get();
  vk::CommandList::submit(std::span<vk::CommandList* const>(&list, 1));  // its own fence, never waited on
  ++stats_.submits;
  submitted_.push_back(s);
  unfenced_ = true;
}

void Device::hand_over() {
  if (capturing_) fail("work of another runtime cannot be captured into a replayed step");
  emit_window();
  stream().transfer_barrier();  // the list ends ordered, whatever was last recorded
  flush();
}

void Device::take_back() {
  emit_window();
  stream().transfer_barrier();
}

void Device::sync() {
  if (capturing_) fail("Device::sync during a capture: the captured step must not wait for the device (a download?)");
  flush();
  for (auto& f : in_flight_) retire(f);  // in submission order; each fence also covers the segments queued with it
  in_flight_.clear();
  submitted_.clear();
  held_.clear();
}

}  // namespace hl::gpu
