// The Vulkan runtime on whatever device is there (lavapipe in CI), under the validation layers
// (hybridlab_test sets HYBRIDLAB_VALIDATION=1): every test ends with no validation message.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "runtime/vulkan/runtime.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <random>

using namespace hl::vk;

namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no Error thrown)";
}

void require_no_validation_messages(const Context& ctx) {
  std::string text;
  for (const auto& m : ctx.validation_messages()) text += m + "\n";
  INFO(text);
  REQUIRE(ctx.validation_message_count() == 0);
}

// Small integers scaled by 0.75: every partial sum is exact in float, so GPU == CPU exactly.
std::vector<float> random_input(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-100, 100);
  std::vector<float> x(n);
  for (float& v : x) v = float(dist(rng));
  return x;
}

struct Push {
  uint32_t n;
  float alpha;
};

struct Selftest {
  uint32_t wg = 64;
  float scale = 3.0f, alpha = 0.25f, bias = 0.0f;
  uint32_t required_subgroup_size = 0;

  std::vector<float> cpu(const std::vector<float>& x) const {
    std::vector<float> sums(div_up(uint32_t(x.size()), wg), 0.0f);
    for (size_t i = 0; i < x.size(); ++i) sums[i / wg] += alpha * scale * x[i] + bias;
    return sums;
  }

  Pipeline pipeline(Context& ctx, std::span<const uint32_t> spirv) const {
    return Pipeline(ctx, {.name = "runtime_selftest",
                          .spirv = spirv,
                          .buffers = 3,
                          .push_constant_bytes = sizeof(Push),
                          .spec = {{0, wg}, {1, scale}},
                          .required_subgroup_size = required_subgroup_size});
  }

  void record(CommandList& cmd, const Pipeline& p, const Buffer& x, const Buffer& sums, const Buffer& info) const {
    const uint32_t n = uint32_t(x.size() / sizeof(float));
    cmd.bind(p, {x, sums, info});
    cmd.push_constants(Push{n, alpha});
    cmd.dispatch(div_up(n, wg));
  }

  // Runs once; returns the sums and the subgroup size the shader saw.
  std::pair<std::vector<float>, uint32_t> run(Context& ctx, std::span<const uint32_t> spirv,
                                              const std::vector<float>& x) const;
};

// One recorded selftest dispatch: pipeline, buffers (input uploaded) and command list.
struct SelftestJob {
  SelftestJob(Context& ctx, const Selftest& t, std::span<const uint32_t> spirv, const std::vector<float>& x,
              BufferKind sums_kind = BufferKind::DeviceLocal)
      : pipeline(t.pipeline(ctx, spirv)),
        in(ctx, x.size() * sizeof(float), BufferKind::DeviceLocal, "x"),
        sums(ctx, div_up(uint32_t(x.size()), t.wg) * sizeof(float), sums_kind, "sums"),
        info(ctx, 16, BufferKind::HostVisible, "info"),
        cmd(ctx, "selftest") {
    in.upload(x);
    t.record(cmd, pipeline, in, sums, info);
  }
  Pipeline pipeline;
  Buffer in, sums, info;
  CommandList cmd;
};

std::pair<std::vector<float>, uint32_t> Selftest::run(Context& ctx, std::span<const uint32_t> spirv,
                                                      const std::vector<float>& x) const {
  SelftestJob job(ctx, *this, spirv, x);
  job.cmd.submit_and_wait();
  return {job.sums.download<float>(), job.info.download<uint32_t>()[0]};
}

}  // namespace

TEST_CASE("vk: devices are listed and selected by name and index", "[vk]") {
  auto devices = list_devices();
  REQUIRE(!devices.empty());
  for (const auto& d : devices) {
    CHECK(!d.name.empty());
    CHECK(d.api_version >= VK_API_VERSION_1_1);
  }
  auto ctx = Context::create();
  const DeviceInfo& chosen = ctx->info();
  REQUIRE(chosen.name == devices[chosen.index].name);

  auto by_index = Context::create({.device = std::to_string(chosen.index)});
  CHECK(by_index->info().name == chosen.name);
  // A case-insensitive substring of the name.
  std::string upper = chosen.name.substr(0, 4);
  std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
  auto by_name = Context::create({.device = upper});
  CHECK(by_name->info().name.substr(0, 4) == chosen.name.substr(0, 4));

  auto lavapipe = std::find_if(devices.begin(), devices.end(),
                               [](const DeviceInfo& d) { return d.name.find("llvmpipe") != std::string::npos; });
  if (lavapipe != devices.end()) {
    auto ctx2 = Context::create({.device = "llvmpipe"});
    CHECK(ctx2->info().index == lavapipe->index);
    CHECK(ctx2->profile().name() == "lavapipe");
    CHECK(ctx2->device_slug() == "llvmpipe");
    require_no_validation_messages(*ctx2);
  }
  require_no_validation_messages(*ctx);
  require_no_validation_messages(*by_index);
  require_no_validation_messages(*by_name);

  // HYBRIDLAB_DEVICE applies when the option is empty.
  setenv("HYBRIDLAB_DEVICE", "no-such-gpu-xyz", 1);
  CHECK_THROWS_AS(Context::create(), Error);
  unsetenv("HYBRIDLAB_DEVICE");
}

// Options that leave device features off or ask for diagnostics still give a working context: cooperative matrices
// off (the scalar plan; lavapipe has none to start with, so only the off state is checked) and pipeline statistics
// (lavapipe lacks VK_KHR_pipeline_executable_properties: a notice, no statistics, pipelines as usual).
TEST_CASE("vk: contexts without cooperative matrices and with pipeline statistics", "[vk]") {
  auto ctx = Context::create({.pipeline_stats = true, .cooperative_matrices = false});
  CHECK_FALSE(ctx->info().cooperative_matrix);
  CHECK(ctx->info().cooperative_matrix_configs.empty());
  setenv("HYBRIDLAB_COOPMAT", "0", 1);
  CHECK_FALSE(Context::create()->info().cooperative_matrix);
  unsetenv("HYBRIDLAB_COOPMAT");
  require_no_validation_messages(*ctx);
}

TEST_CASE("vk: an unknown device gives an error listing the devices", "[vk]") {
  std::string m = message_of([] { Context::create({.device = "no-such-gpu-xyz"}); });
  CHECK_THAT(m, Catch::Contains("no Vulkan device matches 'no-such-gpu-xyz'"));
  CHECK_THAT(m, Catch::Contains(list_devices().front().name));
  m = message_of([] { Context::create({.device = "999"}); });
  CHECK_THAT(m, Catch::Contains("available devices: 0: "));
}

TEST_CASE("vk: device info is sane", "[vk]") {
  auto ctx = Context::create();
  const DeviceInfo& d = ctx->info();
  INFO(d.summary());
  CHECK(std::has_single_bit(d.subgroup_size));
  CHECK(d.min_subgroup_size <= d.subgroup_size);
  CHECK(d.subgroup_size <= d.max_subgroup_size);
  CHECK(d.has_subgroup_operation(VK_SUBGROUP_FEATURE_ARITHMETIC_BIT));
  CHECK(d.max_shared_memory > 0);
  CHECK(d.max_workgroup_invocations >= 128);
  CHECK(d.max_push_constants >= 128);
  CHECK(d.max_storage_buffer_range > 0);
  CHECK(d.device_local_heap > 0);
  CHECK(d.timestamp_valid_bits > 0);
  CHECK(d.timestamp_period > 0);
  CHECK(!d.driver_name.empty());
  for (const auto& c : d.cooperative_matrix_configs) CHECK(c.m * c.n * c.k > 0);
  CHECK(ctx->profile().get("wg_size", 0) > 0);
  require_no_validation_messages(*ctx);
}

TEST_CASE("vk: device slugs and profiles", "[vk]") {
  CHECK(device_slug("NVIDIA H200") == "nvidia-h200");
  CHECK(device_slug("llvmpipe (LLVM 15.0.6, 256 bits)") == "llvmpipe");
  CHECK(device_slug("AMD Radeon AI PRO R9700 (RADV GFX1201)") == "amd-radeon-ai-pro-r9700");

  DeviceInfo d;
  d.vendor_id = 0x10DE, d.name = "NVIDIA H200";
  CHECK(profile_name_for(d) == "nvidia-hopper");
  d.name = "NVIDIA GeForce RTX 4090";
  CHECK(profile_name_for(d) == "generic");
  d.vendor_id = 0x1002, d.name = "AMD Radeon AI PRO R9700 (RADV GFX1201)";
  CHECK(profile_name_for(d) == "amd-rdna4");
  d.vendor_id = 0x10005, d.name = "llvmpipe (LLVM 15.0.6, 256 bits)", d.driver_name = "llvmpipe";
  CHECK(profile_name_for(d) == "lavapipe");

  DeviceProfile p = DeviceProfile::named("amd-rdna4");
  CHECK(p.get("wg_size", 0) == 256);
  CHECK(p.get("subgroup_size_preferred", 0) == 32);
  CHECK(p.get("no.such.key", 7) == 7);
  p.apply_overrides("wg_size=512,my.kernel.tile=0x10");
  CHECK(p.get("wg_size", 0) == 512);
  CHECK(p.get("my.kernel.tile", 0) == 16);
  CHECK_THROWS_AS(p.apply_overrides("wg_size"), Error);
  CHECK_THROWS_AS(p.apply_overrides("wg_size=-1"), Error);
  CHECK_THROWS_AS(DeviceProfile::named("nope"), Error);
}

TEST_CASE("vk: upload/download round trip", "[vk]") {
  auto ctx = Context::create();
  std::mt19937 rng(7);
  for (BufferKind kind : {BufferKind::DeviceLocal, BufferKind::HostVisible}) {
    std::vector<uint32_t> data(100'003);
    for (auto& v : data) v = rng();
    Buffer b(*ctx, data.size() * 4, kind, "roundtrip");
    b.upload(data);
    CHECK(b.download<uint32_t>() == data);

    // Part of a buffer, at an offset.
    std::vector<uint32_t> part = {1, 2, 3, 4};
    b.upload(part, 40);
    std::vector<uint32_t> back(4);
    b.download(back.data(), 16, 40);
    CHECK(back == part);

    // Fill, zero and copy on the GPU.
    b.fill_u32(0xdeadbeef);
    auto filled = b.download<uint32_t>();
    CHECK(std::all_of(filled.begin(), filled.end(), [](uint32_t v) { return v == 0xdeadbeef; }));
    Buffer c(*ctx, data.size() * 4, BufferKind::DeviceLocal, "copy");
    c.upload(data);
    b.zero();
    CHECK(b.download<uint32_t>() == std::vector<uint32_t>(data.size(), 0));
    b.copy_from(c);
    CHECK(b.download<uint32_t>() == data);
  }
  CHECK_THROWS_AS(Buffer(*ctx, 16, BufferKind::DeviceLocal).upload(std::vector<uint32_t>(5)), Error);
  require_no_validation_messages(*ctx);
}

TEST_CASE("vk: the selftest shader reduces correctly for any workgroup size", "[vk]") {
  auto ctx = Context::create();
  const auto x = random_input(1000, 1);
  for (uint32_t wg : {64u, 100u, ctx->profile().get("wg_size", 64)}) {
    Selftest t{.wg = wg};
    auto [sums, subgroup] = t.run(*ctx, embedded_spirv("runtime_selftest"), x);
    INFO("workgroup " << wg);
    CHECK(sums == t.cpu(x));
    CHECK(subgroup == ctx->info().subgroup_size);
  }
  // A required subgroup size, where the device supports one.
  const DeviceInfo& d = ctx->info();
  if (d.subgroup_size_control && d.compute_required_subgroup_size) {
    Selftest t{.wg = 128, .required_subgroup_size = d.max_subgroup_size};
    auto [sums, subgroup] = t.run(*ctx, embedded_spirv("runtime_selftest"), x);
    CHECK(sums == t.cpu(x));
    CHECK(subgroup == d.max_subgroup_size);
  }
  CHECK_THAT(
      message_of([&] { Selftest{.required_subgroup_size = 3}.pipeline(*ctx, embedded_spirv("runtime_selftest")); }),
      Catch::Contains("requires subgroup size 3"));
  require_no_validation_messages(*ctx);
}

// subgroup_size_preferred pins every pipeline of a context to one subgroup size (amd-rdna4's 32): the info the kernels
// size their workgroups by names that size alone, a pipeline made without a size of its own runs at it, and a size
// the device cannot require is a one-line error when asked for.
TEST_CASE("vk: subgroup_size_preferred pins every pipeline to one subgroup size", "[vk]") {
  const DeviceInfo plain = Context::create()->info();
  if (!plain.subgroup_size_control || !plain.compute_required_subgroup_size) {
    WARN("SKIPPED: " << plain.name << " cannot require a compute subgroup size");
    return;
  }
  const auto x = random_input(1000, 2);
  for (uint32_t size = plain.min_subgroup_size; size <= plain.max_subgroup_size; size *= 2) {
    INFO("subgroup size " << size);
    auto ctx = Context::create({.tune = fmt::format("subgroup_size_preferred={}", size)});
    const DeviceInfo& d = ctx->info();
    CHECK(d.pipeline_subgroup_size == size);
    CHECK((d.subgroup_size == size && d.min_subgroup_size == size && d.max_subgroup_size == size));
    Selftest t{.wg = 4 * size};
    auto [sums, subgroup] = t.run(*ctx, embedded_spirv("runtime_selftest"), x);
    CHECK(sums == t.cpu(x));
    CHECK(subgroup == size);
    require_no_validation_messages(*ctx);
  }
  CHECK(Context::create({.tune = "subgroup_size_preferred=0"})->info().pipeline_subgroup_size == 0);
  const uint32_t too_big = plain.max_subgroup_size * 2;
  CHECK_THAT(message_of([&] { Context::create({.tune = fmt::format("subgroup_size_preferred={}", too_big)}); }),
             Catch::Contains(fmt::format("subgroup_size_preferred={}", too_big)) &&
                 Catch::Contains(fmt::format("runs compute subgroups of {} to {}", plain.min_subgroup_size, plain.max_subgroup_size)));
  CHECK_THAT(message_of([&] { Context::create({.tune = "subgroup_size_preferred=3"}); }),
             Catch::Contains("subgroup_size_preferred=3"));
}

TEST_CASE("vk: descriptor pools work where push descriptors are not used", "[vk]") {
  auto ctx = Context::create({.use_push_descriptors = false});
  REQUIRE(!ctx->push_descriptors());
  const auto x = random_input(777, 2);
  Selftest t;
  CHECK(t.run(*ctx, embedded_spirv("runtime_selftest"), x).first == t.cpu(x));
  require_no_validation_messages(*ctx);
}

TEST_CASE("vk: run-time compilation with a define", "[vk]") {
  auto ctx = Context::create();
  const auto x = random_input(1000, 3);
  Selftest t{.bias = 1.0f};
  auto spirv = compile_glsl("runtime_selftest", {{"SELFTEST_BIAS", "1.0"}});
  CHECK(t.run(*ctx, spirv, x).first == t.cpu(x));

  // Errors: the compiler's message; unknown embedded names list the known ones.
  CHECK_THAT(message_of([] { compile_glsl("#version 450\nvoid main() { no_such_function(); }\n", {}, "bad.comp"); }),
             Catch::Contains("bad.comp") && Catch::Contains("no_such_function"));
  CHECK_THAT(message_of([] { compile_glsl("#version 450\n#include \"missing.glsl\"\nvoid main() {}\n"); }),
             Catch::Contains("missing.glsl"));
  CHECK_THAT(message_of([] { embedded_spirv("nope"); }), Catch::Contains("runtime_selftest"));
  CHECK(embedded_glsl("common.glsl").find("hl_workgroup_sum") != std::string_view::npos);
  require_no_validation_messages(*ctx);
}

TEST_CASE("vk: a recorded command list is resubmitted", "[vk]") {
  auto ctx = Context::create();
  const auto x = random_input(4096, 4);
  Selftest t;
  SelftestJob job(*ctx, t, embedded_spirv("runtime_selftest"), x, BufferKind::HostVisible);
  for (int i = 0; i < 3; ++i) {
    job.sums.zero();  // proves each submit runs the dispatch again
    job.cmd.submit_and_wait();
    CHECK(job.sums.download<float>() == t.cpu(x));
  }
  CHECK_THROWS_AS(job.cmd.dispatch(1), Error);  // closed until reset()
  job.cmd.reset();
  CHECK_THAT(message_of([&] {
               job.cmd.bind(job.pipeline, {job.in, job.sums});
             }),
             Catch::Contains("takes 3 buffers, 2 given"));
  require_no_validation_messages(*ctx);
}

TEST_CASE("vk: GPU timing returns plausible samples", "[vk]") {
  auto ctx = Context::create();
  const auto x = random_input(1 << 14, 5);
  Selftest t;
  SelftestJob job(*ctx, t, embedded_spirv("runtime_selftest"), x);
  job.cmd.barrier();  // then the same dispatch again
  t.record(job.cmd, job.pipeline, job.in, job.sums, job.info);
  auto samples = time_command_list(*ctx, job.cmd, 1, 5);
  REQUIRE(samples.size() == 5);
  for (double ns : samples) {
    CHECK(ns > 0);
    CHECK(ns < 5e9);
  }
  CHECK(job.sums.download<float>() == t.cpu(x));
  require_no_validation_messages(*ctx);
}

TEST_CASE("vk: impossible buffers are errors, not crashes", "[vk]") {
  auto ctx = Context::create();
  const DeviceInfo& d = ctx->info();
  std::string m = message_of([&] { Buffer(*ctx, d.device_local_heap * 2, BufferKind::DeviceLocal, "huge"); });
  CHECK_THAT(m, Catch::StartsWith("out of device memory: allocating") && Catch::Contains("heap has"));
  if (VkDeviceSize(d.max_storage_buffer_range) + 4 < d.device_local_heap) {
    m = message_of([&] { Buffer(*ctx, VkDeviceSize(d.max_storage_buffer_range) + 4, BufferKind::DeviceLocal, "big"); });
    CHECK_THAT(m, Catch::Contains("maxStorageBufferRange"));
  }
  require_no_validation_messages(*ctx);
}

TEST_CASE("vk: a timeout is an Error, and the list runs again after wait_idle", "[vk]") {
  auto ctx = Context::create();
  const auto x = random_input(1 << 20, 6);
  Selftest t;
  SelftestJob job(*ctx, t, embedded_spirv("runtime_selftest"), x);
  CHECK_THAT(message_of([&] { job.cmd.submit_and_wait(std::chrono::milliseconds(0)); }),
             Catch::Contains("'selftest' did not finish within 0 ms"));
  ctx->wait_idle();
  job.cmd.submit_and_wait();
  CHECK(job.sums.download<float>() == t.cpu(x));
  require_no_validation_messages(*ctx);
}

TEST_CASE("vk: the pipeline cache is saved and loaded", "[vk]") {
  const std::string path = "test_vk_runtime.pipeline_cache";
  std::remove(path.c_str());
  for (int round = 0; round < 2; ++round) {
    auto ctx = Context::create({.pipeline_cache_path = path});
    Pipeline p = Selftest{}.pipeline(*ctx, embedded_spirv("runtime_selftest"));
    ctx->save_pipeline_cache();
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    CHECK(in.tellg() > 0);
    require_no_validation_messages(*ctx);
  }
  std::remove(path.c_str());
}

// The cooperative-matrix shaders (*_cm.comp, built by the venv's glslang: ops/shaders/coopmat.glsl) are embedded
// as SPIR-V that declares the capability and uses the KHR instructions; the others do not.
TEST_CASE("vk: the embedded cooperative-matrix shaders are real KHR cooperative-matrix SPIR-V", "[vk]") {
  constexpr uint32_t kCapability = 17, kCooperativeMatrixKHR = 6022, kMulAdd = 4459;
  int cm = 0;
  for (const auto& s : hl::vk::detail::embedded_shaders()) {
    const std::string name(s.name);
    const auto words = hl::vk::embedded_spirv(name);
    REQUIRE(words.size() > 5);
    CHECK(words[0] == 0x07230203u);  // the SPIR-V magic number
    bool capability = false, muladd = false;
    for (size_t i = 5; i < words.size();) {
      const uint32_t op = words[i] & 0xFFFFu, len = words[i] >> 16;
      REQUIRE(len > 0);
      capability |= op == kCapability && words[i + 1] == kCooperativeMatrixKHR;
      muladd |= op == kMulAdd;
      i += len;
    }
    INFO(name);
    const bool is_cm = name.size() > 3 && name.ends_with("_cm");
    CHECK(capability == is_cm);
    CHECK(muladd == is_cm);
    cm += is_cm;
  }
  CHECK(cm >= 3);  // route_gemm_cm, attention_flash_cm, the ssm_chunk *_cm kernels
}
