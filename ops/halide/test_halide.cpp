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

#ifdef HYBRIDLAB_HALIDE_VULKAN
// halide-vulkan on hybridlab's buffers: Halide's kernels read and write the tensors' own device buffers, so a chain of
// ops, Halide's and hand-written ones in any mix, keeps its data on the device: no upload or download between them,
// the result device-current only, and equal to the reference chain's. Its kernels, on hybridlab's stream, can be
// captured for decode replay; submitted by Halide's runtime (halide.vulkan.own_dispatch = 0) they cannot.
TEST_CASE("halide-vulkan: ops chained on hybridlab's buffers, hand-written kernels between, nothing through the host", "[halide][vk]") {
  std::mt19937_64 g(11);
  gpu::Device& d = device();
  gpu::WeightStore ws(&d);
  gpu::VariantCtx c{&d, &ws};
  const auto& r = gpu::Registry::get();
  const int64_t T = 3, H = 96, O = 40;
  const WeightRef gain = weight("gain", randn(g, 1, H)), w = weight("w", randn(g, O, H));
  const Tensor x = Tensor::from(randn(g, T, H)), skip = Tensor::from(randn(g, T, O));
  const auto chain = [&](const std::string& norm, const std::string& mm, const std::string& add) {
    gpu::OpArgs n{{{"x", x}}, {{"gain", gain}}, {{"eps", 1e-6}}};
    r.variant("rmsnorm", norm).run(c, n);
    gpu::OpArgs m{{{"x", n.t.at("y")}}, {{"w", w}}, {}};
    r.variant("matmul", mm).run(c, m);
    gpu::OpArgs s{{{"a", m.t.at("y")}, {"b", skip}}, {}, {}};
    r.variant("add", add).run(c, s);
    return s.t.at("y");
  };
  const Mat<float> want = chain("reference", "reference", "reference").f32();
  const std::string vk_norm = r.family_default("rmsnorm", "vulkan")->name, vk_mm = r.family_default("matmul", "vulkan")->name,
                    vk_add = r.family_default("add", "vulkan")->name;
  const std::vector<std::array<std::string, 3>> chains{
      {"halide-vulkan:rmsnorm:gpu_tuned", "halide-vulkan:matmul:gpu_tuned", "halide-vulkan:add:gpu_tuned"},
      {"halide-vulkan:rmsnorm:gpu_plain", vk_mm, "halide-vulkan:add:gpu_plain"},
      {vk_norm, "halide-vulkan:matmul:gpu_plain", vk_add}};
  for (const auto& [norm, mm, add] : chains) {
    INFO(norm << " -> " << mm << " -> " << add);
    chain(norm, mm, add);  // the weights go to the device once; x and skip are on it from now on
    d.sync();
    d.reset_stats();
    const Tensor y = chain(norm, mm, add);
    d.sync();
    CHECK(d.stats().uploads == 0);
    CHECK(d.stats().downloads == 0);
    CHECK(y.device_current());
    CHECK(!y.host_current());
    CHECK(rel_l2(y.f32(), want) < 1e-5);
  }
  const gpu::Variant& v = r.variant("add", "halide-vulkan:add:gpu_tuned");
  CHECK((v.capturable && v.capturable_on && v.capturable_on(d)));  // its kernels on hybridlab's stream
  vk::ScopedTuning old(d.ctx().profile(), {{"halide.vulkan.own_dispatch", 0}});
  CHECK(!v.capturable_on(d));  // Halide's runtime submitting them
  require_no_validation_messages();
}
#endif

// Every sweep point built (hybridlab_halide_sweep) is a registered variant: a generator's points are registered only
// where halide.cpp names its list, so a sweep added without that would build and never run.
TEST_CASE("halide: every sweep point built is a registered variant", "[halide]") {
  const auto& r = gpu::Registry::get();
  int registered = 0;
  for (const auto& op : r.ops())
    for (const auto* v : r.variants(op.name))
      if (v->summary.find("sweep point: ") != std::string::npos) ++registered;
  CHECK(registered == gpu::halide::sweep_points_built());
}

// The CPU schedules that write their new state over the old one (ssm_conv, gdn_prep, ssm_scan's step and chunks) are
// right only if no task writes a state element that another task, or a later stage, still has to read. Such a race
// shows now and then, not on every call (gdn_prep's rows in parallel failed one run in six here), so every op that
// carries a state runs each case many times, fresh inputs each time, every call against the reference.
TEST_CASE("halide: CPU schedules of the ops that carry a state match the reference on every one of many calls",
          "[halide][state]") {
  int ops = 0;
  for (const gpu::OpDef& def : gpu::Registry::get().ops())
    if (!def.states.empty() && def.cases && halide_variants(def.name).size() > 0) {
      INFO(def.name);
      check_every_variant(def.name, {"halide"}, 24);
      ++ops;
    }
  CHECK(ops >= 3);  // ssm_conv, gdn_prep, ssm_scan at least
}
