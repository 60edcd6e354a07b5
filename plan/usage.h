// Which kernel ran for every op, layer kind and phase (the variant that actually ran: where the plan's variant
// delegates, e.g. vulkan:auto, the one it picked), the per-token fallbacks in prefill, and where data crossed
// between the host and the device.
#pragma once
#include <map>
#include <set>
#include <string>
#include <tuple>

namespace hl::gpu {

class Usage {
 public:
  // where: "model", "gated-deltanet" or "full-attention"; chosen: the plan's variant; ran: the one that ran.
  void record(const std::string& op, const std::string& where, bool prefill, const std::string& chosen,
              const std::string& ran, bool per_token);
  // Host <-> device transfers made while an op's variant ran (it read a tensor whose newer copy was on the other side,
  // or uploaded a weight the first time): where data crossed. Not counted under per-op profiling or in a capture.
  void record_transfers(const std::string& op, const std::string& where, bool prefill, uint64_t uploads,
                        uint64_t upload_bytes, uint64_t downloads, uint64_t download_bytes);
  struct Transfers {
    uint64_t uploads = 0, upload_bytes = 0, downloads = 0, download_bytes = 0;
  };
  // Per (op, where, phase), those with any.
  const std::map<std::tuple<std::string, std::string, std::string>, Transfers>& transfers() const { return transfers_; }
  std::string report() const;
  bool prefill_fallback() const { return !prefill_fallbacks_.empty(); }

 private:
  std::map<std::tuple<std::string, std::string, std::string>, std::set<std::string>> used_;  // (op, where, phase)
  std::set<std::string> prefill_fallbacks_;
  std::map<std::tuple<std::string, std::string, std::string>, Transfers> transfers_;
};

}  // namespace hl::gpu
