// The Halide variants in the registry: plain and tuned schedules of every op that has them.
#include "halide_check.h"
#include "ops/halide/halide.h"

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

#ifdef HYBRIDLAB_HALIDE_VULKAN
// halide-vulkan runs on hybridlab's VkDevice: after a Halide Vulkan variant ran, Halide's context (read through its
// public acquire call, gpu::halide::vulkan_context) holds hybridlab's instance, device and queue. A second device of the process is refused with
// the reason (Halide keeps one context per process), and a second device's teardown leaves Halide's context alone.
TEST_CASE("halide-vulkan: Halide's runtime on hybridlab's device", "[halide][vk]") {
  std::mt19937_64 g(5);
  const gpu::OpArgs a{{{"a", Tensor::from(randn(g, 3, 70))}, {"b", Tensor::from(randn(g, 3, 70))}}, {}, {}};
  require_close("add", "halide-vulkan:add:gpu_tuned", a, 0);
  const auto context = [] {
    const gpu::halide::VulkanContext v = gpu::halide::vulkan_context();
    CHECK(v.allocator);
    return std::tuple{v.instance, v.device, v.queue};
  };
  const std::tuple<const void*, const void*, const void*> ours{device().ctx().instance(), device().ctx().device(),
                                                               device().ctx().queue()};
  CHECK(context() == ours);
  const auto& r = gpu::Registry::get();
  {
    gpu::Device other(vk::ContextOptions{.device = std::to_string(device().info().index)});
    CHECK_THAT(r.availability(r.variant("add", "halide-vulkan:add:gpu_tuned"), &other), Catch::Contains("one context per process"));
  }
  CHECK(context() == ours);
  require_close("add", "halide-vulkan:add:gpu_plain", a, 0);
  require_no_validation_messages();  // Halide's calls on hybridlab's device, under its validation layer in CI
}
#endif
