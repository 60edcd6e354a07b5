// A plan picks one variant per op: '--ops ssm_scan=vulkan:block_resident,moe_experts=vulkan:per_token'.
// '*=vulkan' picks the vulkan family's default variant for every op that has one; the rest stay on the
// reference. Later entries override earlier ones. Unknown ops or variants are one-line errors.
#pragma once
#include <map>
#include <string>

#include "ops/registry.h"

namespace hl::gpu {

class Plan {
 public:
  Plan();  // every op on the reference
  // dev: the open device (null if none); explicitly named variants must be available on it, while a
  // '*' entry skips the ops whose variant is unavailable (and says so in notes()).
  static Plan parse(const std::string& spec, const Device* dev);
  // True when spec names any variant that needs a device (so the caller opens one before parse()).
  static bool needs_device(const std::string& spec);

  const Variant& variant(const std::string& op) const;
  void set(const std::string& op, const Variant* v);  // for tests and sweeps: any variant object
  std::string describe() const;  // the non-reference choices, "op=variant,..." ("all reference" if none)
  const std::string& notes() const { return notes_; }
  bool uses_device() const;

 private:
  std::map<std::string, const Variant*> v_;
  std::string notes_;
};

}  // namespace hl::gpu
