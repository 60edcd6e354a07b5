// Which kernel ran for every op, layer kind and phase (the variant that actually ran: where the plan's variant
// delegates, e.g. vulkan:auto, the one it picked), and the per-token fallbacks in prefill.
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
  std::string report() const;
  bool prefill_fallback() const { return !prefill_fallbacks_.empty(); }

 private:
  std::map<std::tuple<std::string, std::string, std::string>, std::set<std::string>> used_;  // (op, where, phase)
  std::set<std::string> prefill_fallbacks_;
};

}  // namespace hl::gpu
