#include "plan/usage.h"

#include <fmt/format.h>

namespace hl::gpu {

void Usage::record(const std::string& op, const std::string& where, bool prefill, const std::string& chosen,
                   const std::string& ran, bool per_token) {
  used_[{op, where, prefill ? "prefill" : "decode"}].insert(ran == chosen ? ran : ran + " (via " + chosen + ")");
  if (per_token && prefill) prefill_fallbacks_.insert(op + "=" + ran + " (" + where + ")");
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
  return s;
}

}  // namespace hl::gpu
