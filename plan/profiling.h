// Per-op time: Vulkan variants by timestamps around their dispatches, host variants by wall clock after a device
// sync (their time includes downloading their inputs, not the device work queued before them).
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "runtime/device.h"

namespace hl::gpu {

class Profiler {
 public:
  struct OpTime {
    double ns = 0;
    int64_t calls = 0;
    bool gpu = false;
  };
  // Runs `fn` (one op's variant) timed under `op`; on_device: its work is Vulkan dispatches on dev.
  void time(Device* dev, const std::string& op, bool on_device, const std::function<void()>& fn);
  const std::map<std::string, OpTime>& times(Device* dev);  // syncs and collects pending timestamps
  void reset(Device* dev) { times(dev), times_.clear(); }

 private:
  struct Pending {
    std::string op;
    uint32_t begin, end;
  };
  std::vector<Pending> pending_;
  std::map<std::string, OpTime> times_;
};

}  // namespace hl::gpu
