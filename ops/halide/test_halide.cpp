// The Halide variants in the registry: plain and tuned schedules of every op that has them.
#include "halide_check.h"

using namespace hl;
using namespace hl::test;

TEST_CASE("halide: the registry lists plain and tuned CPU schedules of every op, tuned the family default", "[halide]") {
  const auto& r = gpu::Registry::get();
  for (const char* op : {"rmsnorm", "gated_rmsnorm", "matmul", "lm_head", "ssm_conv", "ssm_scan", "attention", "moe_experts"}) {
    INFO(op);
    CHECK(r.variant(op, std::string("halide:") + op + ":plain").family == "halide");
    const gpu::Variant* d = r.family_default(op, "halide");
    REQUIRE(d);
    CHECK(d->name == std::string("halide:") + op + ":tuned");
    CHECK(!d->needs_device);
  }
#ifdef HYBRIDLAB_HALIDE_VULKAN
  for (const char* op : {"rmsnorm", "gated_rmsnorm", "matmul", "lm_head", "ssm_conv", "ssm_scan", "attention", "moe_experts"}) {
    INFO(op);
    CHECK(r.variant(op, std::string("halide-vulkan:") + op + ":gpu_plain").family == "halide-vulkan");
    const gpu::Variant* d = r.family_default(op, "halide-vulkan");
    REQUIRE(d);
    CHECK(d->name == std::string("halide-vulkan:") + op + ":gpu_tuned");
    CHECK(d->needs_device);
    CHECK(r.availability(*d, &device()).empty());  // lavapipe in CI: Halide's runtime finds it too
  }
#endif
  CHECK(gpu::halide::cpu_threads() >= 1);
}
