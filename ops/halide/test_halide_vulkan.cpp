// Halide's Vulkan kernels as hybridlab dispatches (ops/halide/halide_vulkan.cpp): each kernel a hybridlab pipeline on
// hybridlab's stream, or (tunable halide.vulkan.own_dispatch = 0) submitted by Halide's runtime as before.
#ifdef HYBRIDLAB_HALIDE_VULKAN
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "halide_check.h"
#include "ops/halide/halide.h"
#include "ops/halide/halide_vulkan.h"

using namespace hl;
using namespace hl::test;

namespace {

gpu::halide::VulkanCounts since(const gpu::halide::VulkanCounts& a) {
  const gpu::halide::VulkanCounts b = gpu::halide::vulkan_counts();
  return {b.dispatched - a.dispatched, b.runtime_kernels - a.runtime_kernels, b.runtime_transfers - a.runtime_transfers};
}

// Runs `variant` of `op` on `a` with one weight store; returns the outputs, synced.
gpu::OpArgs run(const std::string& op, const std::string& variant, const gpu::OpArgs& a) {
  gpu::WeightStore ws(&device());
  gpu::VariantCtx c{&device(), &ws};
  gpu::OpArgs x = a;
  gpu::Registry::get().variant(op, variant).run(c, x);
  device().sync();
  return x;
}

}  // namespace

TEST_CASE("halide-vulkan: each Halide kernel is a dispatch on hybridlab's stream, or Halide's own with own_dispatch=0",
          "[halide][vk]") {
  std::mt19937_64 g(3);
  const int64_t T = 5, H = 96;
  const gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, H))}}, {{"gain", weight("gain", randn(g, 1, H))}}, {{"eps", 1e-6}}};
  gpu::Device& d = device();
  const auto& r = gpu::Registry::get();
  CHECK(r.variant("rmsnorm", "halide-vulkan:rmsnorm:gpu_tuned").tunables.at(0).key == "halide.vulkan.own_dispatch");
  for (const char* v : {"halide-vulkan:rmsnorm:gpu_tuned", "halide-vulkan:rmsnorm:gpu_plain"}) {
    INFO(v);
    run("rmsnorm", v, a);  // the weight on the device, the pipelines made
    // hybridlab's path (the default): the kernels are counted as hybridlab dispatches, none goes through Halide's
    // queue submission, and the op submits nothing by itself (its work waits for the stream's next flush).
    d.sync();
    d.reset_stats();
    auto c0 = gpu::halide::vulkan_counts();
    run("rmsnorm", v, a);
    const auto own = since(c0);
    CHECK(own.dispatched >= 1);
    CHECK(d.stats().dispatches == own.dispatched);
    CHECK(own.runtime_kernels == 0);
    CHECK(own.runtime_transfers == 0);
    CHECK(d.stats().submits == 1);  // the sync's
    require_close("rmsnorm", v, a, 1e-5);
    // Halide's path: the same kernels, submitted by its runtime; hybridlab records none of them.
    vk::ScopedTuning old(d.ctx().profile(), {{"halide.vulkan.own_dispatch", 0}});
    d.reset_stats();
    c0 = gpu::halide::vulkan_counts();
    run("rmsnorm", v, a);
    const auto theirs = since(c0);
    CHECK(theirs.dispatched == 0);
    CHECK(theirs.runtime_kernels == own.dispatched);
    CHECK(d.stats().dispatches == 0);
    require_close("rmsnorm", v, a, 1e-5);
  }
  require_no_validation_messages();
}

// Timestamps and per-dispatch profiles see Halide's kernels as they see hybridlab's, under their pipelines' names, and
// a captured segment of them replays with the same result.
TEST_CASE("halide-vulkan: Halide's dispatches are timed, profiled and captured as hybridlab's own", "[halide][vk]") {
  std::mt19937_64 g(8);
  gpu::Device& d = device();
  gpu::WeightStore ws(&d);
  gpu::VariantCtx c{&d, &ws};
  const auto& v = gpu::Registry::get().variant("add", "halide-vulkan:add:gpu_tuned");
  const Tensor x = Tensor::from(randn(g, 7, 300)), y = Tensor::from(randn(g, 7, 300));
  const Mat<float> want = x.f32() + y.f32();
  gpu::OpArgs a{{{"a", x}, {"b", y}}, {}, {}};
  v.run(c, a);  // inputs uploaded, pipeline made
  d.set_dispatch_profile(true);
  a = {{{"a", x}, {"b", y}}, {}, {}};
  v.run(c, a);
  const auto times = d.take_dispatch_times();
  d.set_dispatch_profile(false);
  REQUIRE(times.size() == 1);
  CHECK(times[0].first.starts_with("hl_add_gpu_tuned:"));
  CHECK(times[0].second > 0);
  CHECK(d.time_ns([&] { v.run(c, a); }) > 0);

  d.begin_capture();
  a = {{{"a", x}, {"b", y}}, {}, {}};
  v.run(c, a);
  const Tensor out = a.t.at("y");
  const auto seg = d.end_segment();
  d.end_capture();
  REQUIRE(seg);
  CHECK(seg->dispatches == 1);
  const auto read = [&] {
    Mat<float> m(7, 300);
    d.download(out.buffer(d), m.data(), out.bytes());
    return m;
  };
  d.submit(seg, false);
  d.sync();
  CHECK(rel_l2(read(), want) < 1e-6);
  // Replayed after the output was overwritten: the segment writes it again.
  const Mat<float> zeros = Mat<float>::Zero(7, 300);
  d.upload(out.buffer(d), zeros.data(), out.bytes());
  CHECK(read().isZero());
  d.submit(seg);
  d.sync();
  CHECK(rel_l2(read(), want) < 1e-6);
  require_no_validation_messages();
}

// Every Halide Vulkan kernel of the build (every halide-vulkan variant on its op's cases) runs as a hybridlab dispatch:
// none is left to Halide's runtime, its rewritten SPIR-V passes spirv-val for Vulkan 1.3 (where the toolchain has it),
// and the buffers a kernel only reads are marked so (hybridlab's barriers then let readers of one buffer run together).
TEST_CASE("halide-vulkan: every Halide kernel of the build is dispatched by hybridlab, its SPIR-V valid", "[halide][vk][every]") {
  const auto& reg = gpu::Registry::get();
  const auto c0 = gpu::halide::vulkan_counts();
  int variants = 0;
  for (const gpu::OpDef& op : reg.ops())
    for (const gpu::Variant* v : reg.variants(op.name))
      if (v->family == "halide-vulkan" && op.cases) {
        INFO(v->name);
        check_variant_on_cases(op.name, v->name);
        ++variants;
      }
  const auto n = since(c0);
  CHECK(variants >= 30);
  CHECK(n.dispatched > 0);
  CHECK(n.runtime_kernels == 0);
  CHECK(n.runtime_transfers == 0);

  const auto kernels = gpu::halide::vulkan_kernels();
  REQUIRE(kernels.size() >= 30);
  const char* val = std::getenv("HYBRIDLAB_SPIRV_VAL");
  std::string tool = val ? val : "";
#ifdef HYBRIDLAB_SPIRV_VAL_PATH
  if (tool.empty()) tool = HYBRIDLAB_SPIRV_VAL_PATH;
#endif
  if (tool.empty()) WARN("SKIPPED: spirv-val of Halide's rewritten kernels (no spirv-val in the build)");
  const auto dir = std::filesystem::temp_directory_path() / ("hl_halide_spv_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  int readonly = 0;
  for (const auto& k : kernels) {
    INFO(k.name << ": " << k.unpatchable);
    REQUIRE(k.unpatchable.empty());
    REQUIRE(!k.patched.empty());
    const uint32_t written = vk::spirv_written_bindings(k.patched, 32);
    CHECK(written != 0);  // every kernel stores somewhere
    readonly += written != vk::spirv_written_bindings(k.original, 32) ? 1 : 0;
    if (tool.empty()) continue;
    const auto file = dir / "k.spv";
    std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char*>(k.patched.data()), std::streamsize(k.patched.size() * 4));
    const std::string cmd = "'" + tool + "' --target-env vulkan1.3 '" + file.string() + "' 2>&1";
    std::string said;
    if (FILE* p = ::popen(cmd.c_str(), "r")) {
      char buf[512];
      while (std::fgets(buf, sizeof buf, p)) said += buf;
      const int rc = ::pclose(p);
      INFO(said);
      CHECK(rc == 0);
    } else {
      FAIL("could not run " << tool);
    }
  }
  std::filesystem::remove_all(dir);
  CHECK(readonly > 0);
  require_no_validation_messages();
}

TEST_CASE("halide-vulkan: a malformed kernel blob or module is a one-line error", "[halide]") {
  namespace H = gpu::halide_vk;
  const std::vector<uint32_t> empty;
  CHECK_THROWS_WITH(H::decode_blob(nullptr, 0), Catch::Contains("a kernel blob of 0 bytes"));
  const std::vector<uint32_t> truncated{1, 400, 2};  // one module of 400 bytes, its name running past the end
  CHECK_THROWS_WITH(H::decode_blob(reinterpret_cast<const char*>(truncated.data()), 12), Catch::Contains("runs past its end"));
  const std::vector<uint32_t> big{1, 400, 1, 0};  // a module larger than the blob
  CHECK_THROWS_WITH(H::decode_blob(reinterpret_cast<const char*>(big.data()), 16), Catch::Contains("does not fit its blob"));
  const std::vector<uint32_t> no_spirv{1, 16, 1, 0, 3, 1, 0, 0};  // a header pointing past the module
  CHECK_THROWS_WITH(H::decode_blob(reinterpret_cast<const char*>(no_spirv.data()), 32), Catch::Contains("holds no SPIR-V after its header"));
  H::KernelInfo k;
  k.entry = "f";
  const std::vector<uint32_t> junk{0x07230203u, 0x10200, 0, 10, 0, 0x00000001u};  // an instruction of 0 words
  k.spirv = junk;
  CHECK_THROWS_WITH(H::patch_spirv(k), Catch::Contains("malformed SPIR-V"));
  k.spirv = std::span<const uint32_t>(junk.data(), 3);
  CHECK_THROWS_WITH(H::patch_spirv(k), Catch::Contains("not a SPIR-V module"));
}
#endif
