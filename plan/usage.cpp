#include "plan/usage.h"

#include <fmt/format.h>

namespace hl::gpu {

void Usage::record(const std::string& op, const std::string& where, bool prefill, const std::string& chosen,
                   const std::string& ran, bool per_token) {
  used_[{op, where, prefill ? "prefill" : "decode"}].insert(ran == chosen ? ran : ran + " (via " + chosen + ")");
  if (per_token && prefill) prefill_fallbacks_.insert(op + "=" + ran + " (" + where + ")");
}

void Usage::record_transfers(const std::string& op, const std::string& where, bool prefill, uint64_t uploads,
                             uint64_t upload_bytes, uint64_t downloads, uint64_t download_bytes) {
  if (uploads == 0 && downloads == 0) return;
  Transfers& t = transfers_[{op, where, prefill ? "prefill" : "decode"}];
  t.uploads += uploads;
  t.upload_bytes += upload_bytes;
  t.downloads += downloads;
  t.download_bytes += download_bytes;
}

std::string Usage::report() const {
  std::string s = fmt::format("{:<18} {:<15} {:<8} {}\n", "op", "where", "phase", "variant");
  for (auto& [key, vs] : used_) {
    auto& [op, where, phase] = key;
    std::string names;
    for (auto& v : vs) names += (names.empty() ? "" : ", ") + v;
    s += fmt::format("{:<18} {:<15} {:<8} {}\n", op, where, phase, names);
  }
  if (prefill_fallbacks_.empty()) {
    s += "prefill: no per-token fallback\n";
  } else {
    std::string f;
    for (auto& x : prefill_fallbacks_) f += (f.empty() ? "" : "; ") + x;
    s += "PER-TOKEN FALLBACK in prefill (these ops walked the prompt token by token): " + f + "\n";
  }
  if (transfers_.empty()) {
    s += "host <-> device transfers inside ops: none\n";
  } else {
    s += "host <-> device transfers inside ops (where data crossed; weights' first uploads included):\n";
    for (auto& [key, t] : transfers_) {
      auto& [op, where, phase] = key;
      s += fmt::format("  {:<18} {:<15} {:<8} {} up ({:.1f} KiB), {} down ({:.1f} KiB)\n", op, where, phase, t.uploads,
                       double(t.upload_bytes) / 1024, t.downloads, double(t.download_bytes) / 1024);
    }
  }
  return s;
}

}  // namespace hl::gpu
