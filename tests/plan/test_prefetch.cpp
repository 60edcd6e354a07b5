// The decode prefetch helper (plan/prefetch.h): where the stream places its dispatch (one level past the writer of
// `after`, beside that tensor's consumers, with no barrier of its own), that it only reads, and its refusals; with
// volatile loads and with plain loads into a sink per dispatch. Whether it leaves a model's decode unchanged is in
// test_vk_model.cpp (a decode step with and without it, bit for bit).
#include "variant_check.h"

#include "plan/prefetch.h"

using namespace hl;
using namespace hl::test;

TEST_CASE("vk prefetch: placed beside the consumers of `after`, no barrier of its own", "[vk][plan]") {
  gpu::Device& d = device();
  const gpu::BufferPtr none = d.alloc(1024), p1 = d.alloc(1024), p2 = d.alloc(1024), w = d.alloc(1 << 20);
  std::vector<uint32_t> data(1 << 18);
  for (size_t i = 0; i < data.size(); ++i) data[i] = uint32_t(i * 2654435761u);
  d.upload(w, data.data(), data.size() * 4);
  d.sync();
  // Two dependent reads (the bandwidth experiment's kernel: the second binds the first's partial sums), then prefetches.
  const struct {
    uint32_t n, groups, base;
  } pc{1024, 4, 0};
  const auto& rd = d.pipeline("bw_read", {{0, 64}}, 3, sizeof pc);
  auto chain = [&](const std::function<void()>& more) {
    const gpu::DeviceStats s0 = d.stats();
    d.dispatch(rd, {w, p1, none}, pc, 4);
    d.dispatch(rd, {w, p2, p1}, pc, 4);
    more();
    d.sync();
    return std::pair{d.stats().dispatches - s0.dispatches, d.stats().barriers - s0.barriers};
  };
  for (uint32_t vol : {1u, 0u}) {  // volatile loads; plain loads into a sink per dispatch
    INFO("decode.prefetch.volatile " << vol);
    const vk::ScopedTuning kind(d.ctx().profile(), {{"decode.prefetch.volatile", vol}});
    const auto [n2, two] = chain([] {});
    CHECK(n2 == 2u);
    CHECK(two >= 1);
    // After the first read's output: beside the second read, no barrier added; more ranges than one dispatch takes too.
    std::vector<gpu::PrefetchRange> many;
    for (uint64_t i = 0; i < 11; ++i) many.push_back({w, i * 4096, 4096});
    CHECK(chain([&] { gpu::prefetch(d, p1, {{w, 4096, 8192}, {w, 0, 4}, {w, 64, 1 << 16}}); }) == std::pair{3ul, two});
    CHECK(chain([&] { gpu::prefetch(d, p1, many); }) == std::pair{4ul, two});
    // After the second read's output instead: a level of its own, one barrier more (the placement is real).
    CHECK(chain([&] { gpu::prefetch(d, p2, {{w, 0, 1 << 16}}); }) == std::pair{3ul, two + 1});
    std::vector<uint32_t> back(data.size());
    d.download(w, back.data(), back.size() * 4);
    CHECK(back == data);  // read only
  }
  require_no_validation_messages();
}

TEST_CASE("vk prefetch: refuses ranges outside their buffer", "[vk][plan]") {
  gpu::Device& d = device();
  const gpu::BufferPtr after = d.alloc(1024), w = d.alloc(4096);
  CHECK_THROWS_WITH(gpu::prefetch(d, after, {{w, 0, w->size() + 4}}), Catch::Contains("not whole words within it"));
  CHECK_THROWS_WITH(gpu::prefetch(d, after, {{w, 2, 64}}), Catch::Contains("not whole words within it"));
  const gpu::DeviceStats s0 = d.stats();
  gpu::prefetch(d, after, {{w, 0, 0}});  // an empty range: nothing to touch, no dispatch
  d.sync();
  CHECK(d.stats().dispatches == s0.dispatches);
  require_no_validation_messages();
}
