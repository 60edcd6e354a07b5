#include "plan/profiling.h"

#include <chrono>

namespace hl::gpu {

void Profiler::time(Device* dev, const std::string& op, bool on_device, const std::function<void()>& fn) {
  if (on_device) {
    if (pending_.size() >= 1800) times(dev);  // the device's query slots are reused after 4096
    const uint32_t q0 = dev->timestamp();
    fn();
    pending_.push_back({op, q0, dev->timestamp()});
    return;
  }
  if (dev) dev->sync();  // so the host op's wall time leaves out device work queued before it
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  auto& t = times_[op];
  t.ns += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  t.calls++;
}

const std::map<std::string, Profiler::OpTime>& Profiler::times(Device* dev) {
  if (!pending_.empty()) {
    dev->sync();
    for (auto& p : pending_) {
      auto& t = times_[p.op];
      t.ns += dev->elapsed_ns(p.begin, p.end);
      t.calls++;
      t.gpu = true;
    }
    pending_.clear();
  }
  return times_;
}

}  // namespace hl::gpu
