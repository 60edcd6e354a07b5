// Fuzz target: the --ops plan parser (Plan::parse with no device, and Plan::needs_device, plan/plan.cpp).
#include "common.h"
#include "fuzz_util.h"
#include "plan/plan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string spec(reinterpret_cast<const char*>(data), size);
  hl::fuzz::expect_ok_or<hl::Error>([&] {
    (void)hl::gpu::Plan::needs_device(spec);
    const hl::gpu::Plan p = hl::gpu::Plan::parse(spec, nullptr);
    if (p.uses_device()) hl::fuzz::finding("a plan parsed without a device needs one", spec);
    (void)p.describe();
    for (const auto& op : hl::gpu::Registry::get().ops()) (void)p.variant(op.name);
  });
  return 0;
}
