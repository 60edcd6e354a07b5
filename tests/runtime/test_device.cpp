// The device stream (runtime/device.h): submissions split without waiting, pool misses that drain, weights placed
// in blocks.
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

// The stream is submitted in pieces without waiting (Device::flush, and every device.stream.flush_dispatches
// dispatches): a chain of dependent adds split across many submitted lists, with intermediate tensors
// dropped by the host while their lists may still be running, must equal the host's chain exactly.
TEST_CASE("vk device: a dependent chain across flushed, unwaited submissions", "[vk][device]") {
  std::mt19937_64 g(11);
  gpu::Device& d = device();
  const Mat<float> x0 = randn(g, 3, 1000), inc = randn(g, 3, 1000);
  Mat<float> want = x0;
  Tensor x = Tensor::from(x0);
  const Tensor b = Tensor::from(inc);
  const gpu::Variant& add = gpu::Registry::get().variant("add", "vulkan:elementwise");
  gpu::VariantCtx ctx;
  ctx.dev = &d;
  const uint64_t submits0 = d.stats().submits;
  for (int i = 0; i < 150; ++i) {
    gpu::OpArgs a{{{"a", x}, {"b", b}}, {}, {}};
    add.run(ctx, a);
    x = a.t.at("y");  // the previous x's buffer goes back to the pool once its list has run
    want += inc;
    if (i % 7 == 3) d.flush();
  }
  REQUIRE(d.stats().submits - submits0 >= 150 / 7);
  REQUIRE(x.f32() == want);  // same f32 additions in the same order: exact
}

// With nothing submitted still held (after a sync) and no reordering (a prefill step) the stream goes out after
// device.stream.flush_idle_dispatches dispatches, so the GPU starts early; once a list is in flight the rest waits for
// flush_dispatches. A reordered stream (decode) keeps its window whole: flush_dispatches alone.
TEST_CASE("vk device: an idle stream is submitted after its first few dispatches", "[vk][device]") {
  std::mt19937_64 g(23);
  gpu::Device& d = device();
  const uint32_t idle = d.tune("device.stream.flush_idle_dispatches"), every = d.tune("device.stream.flush_dispatches");
  REQUIRE(idle > 1);
  REQUIRE(every > 3 * idle);
  const Mat<float> inc = randn(g, 2, 300);
  Mat<float> want = inc;
  Tensor x = Tensor::from(inc);
  const Tensor b = Tensor::from(inc);
  x.buffer(d), b.buffer(d);
  const gpu::Variant& add = gpu::Registry::get().variant("add", "vulkan:elementwise");
  gpu::VariantCtx ctx;
  ctx.dev = &d;
  const bool reorder = d.reorder();
  for (bool reordered : {false, true})
    for (bool early : {false, true}) {
      INFO("reordered " << reordered << ", idle submit " << early);
      d.set_reorder(reordered);
      d.set_idle_submit(early);
      d.sync();
      const uint64_t s0 = d.stats().submits;
      for (uint32_t i = 0; i < 3 * idle; ++i) {
        gpu::OpArgs a{{{"a", x}, {"b", b}}, {}, {}};
        add.run(ctx, a);
        x = a.t.at("y");
        want += inc;
        INFO("dispatch " << i + 1);
        // Idle submit on (a prefill step's start, reordered or not): once, at the idle count, then in flight; off
        // (decode): not yet.
        CHECK(d.stats().submits - s0 == (early && i + 1 >= idle ? 1u : 0u));
      }
    }
  d.set_reorder(reorder);
  d.set_idle_submit(!reorder);
  REQUIRE(x.f32() == want);  // the same f32 additions in the same order
}

// Several downloads in one submission: each tensor's bytes land in its own destination, in order, after the work
// that made them (recorded, not yet submitted); sizes that differ, one of them empty.
TEST_CASE("vk device: several downloads in one submission", "[vk][device]") {
  std::mt19937_64 g(17);
  gpu::Device& d = device();
  const gpu::Variant& add = gpu::Registry::get().variant("add", "vulkan:elementwise");
  gpu::VariantCtx ctx;
  ctx.dev = &d;
  std::vector<Mat<float>> want;
  std::vector<Tensor> ys;
  for (int64_t cols : {1, 37, 500}) {
    const Mat<float> a = randn(g, 2, cols), b = randn(g, 2, cols);
    gpu::OpArgs args{{{"a", Tensor::from(a)}, {"b", Tensor::from(b)}}, {}, {}};
    add.run(ctx, args);
    ys.push_back(args.t.at("y"));
    want.push_back(a + b);
  }
  std::vector<Mat<float>> got;
  for (const Mat<float>& w : want) got.emplace_back(w.rows(), w.cols());
  std::vector<gpu::Device::Download> parts;
  for (size_t i = 0; i < ys.size(); ++i) parts.push_back({ys[i].buffer(d), got[i].data(), size_t(ys[i].bytes())});
  float none = 7.0f;
  parts.insert(parts.begin() + 1, {ys[0].buffer(d), &none, 0});
  const uint64_t submits = d.stats().submits;
  d.download(parts);
  CHECK(d.stats().submits == submits + 1);
  CHECK(none == 7.0f);
  for (size_t i = 0; i < want.size(); ++i) REQUIRE(got[i] == want[i]);
}

// Device::zero is recorded in stream order: it clears exactly the bytes it is given after the dispatch that wrote them
// (the rest of the buffer keeps that dispatch's values), and the next dispatch reads the zeros; no bytes cross the bus.
// Tensor::device_zeros is such a tensor from the start (the plan's zero recurrent states).
TEST_CASE("vk device: zeroing on the device, in stream order", "[vk][device]") {
  std::mt19937_64 g(19);
  gpu::Device& d = device();
  const gpu::Variant& add = gpu::Registry::get().variant("add", "vulkan:elementwise");
  gpu::VariantCtx ctx;
  ctx.dev = &d;
  const Mat<float> a = randn(g, 3, 257), b = randn(g, 3, 257);
  gpu::OpArgs first{{{"a", Tensor::from(a)}, {"b", Tensor::from(b)}}, {}, {}};
  add.run(ctx, first);  // recorded, not submitted
  Tensor y = first.t.at("y");
  const uint64_t uploaded = d.stats().upload_bytes;
  d.zero(y.buffer_mut(d), size_t(257) * 4);  // row 0 only
  gpu::OpArgs second{{{"a", y}, {"b", Tensor::from(b)}}, {}, {}};
  add.run(ctx, second);
  Mat<float> want = a + b + b;
  want.row(0) = b.row(0);
  REQUIRE(second.t.at("y").f32() == want);
  const Tensor z = Tensor::device_zeros(d, 2, 1000);
  CHECK(d.stats().upload_bytes - uploaded == 3 * 257 * 4);  // the second b, none for the zeros
  CHECK(z.f32() == Mat<float>::Zero(2, 1000));
  CHECK_THROWS_WITH(d.zero(y.buffer_mut(d), 6), Catch::Contains("not a multiple of 4"));
}

// A large buffer the pool lacks drains the stream first (so buffers only recorded work held come back): the
// recorded work is submitted, the allocation succeeds, and the results are unchanged.
TEST_CASE("vk device: a large pool miss drains the recorded work first", "[vk][device]") {
  std::mt19937_64 g(13);
  gpu::Device& d = device();
  d.sync();
  const Mat<float> x0 = randn(g, 2, 300);
  Tensor x = Tensor::from(x0);
  gpu::OpArgs a{{{"a", x}, {"b", x}}, {}, {}};
  gpu::VariantCtx ctx;
  ctx.dev = &d;
  // lavapipe binds at most 128 MiB: the threshold lowered to 1 MiB, and four 128 MiB buffers held at once (the
  // pool cannot hand out four, so at least one misses).
  const vk::ScopedTuning tune(d.ctx().profile(), {{"device.pool.drain_mib", 1}});
  gpu::Registry::get().variant("add", "vulkan:elementwise").run(ctx, a);  // recorded, not submitted
  const uint64_t submits = d.stats().submits;
  std::vector<gpu::BufferPtr> big;
  for (int i = 0; i < 4; ++i) big.push_back(d.alloc(size_t(128) << 20));
  CHECK(d.stats().submits == submits + 1);  // drained once: nothing was recorded after that
  REQUIRE(a.t.at("y").f32() == Mat<float>(2 * x0));
}

// Resident placements (weights): several buffers share one memory block, each keeps its own contents, and a block
// larger than the configured size is made for a larger buffer.
TEST_CASE("vk device: resident buffers are placed together in memory blocks", "[vk][device]") {
  std::mt19937_64 g(14);
  gpu::Device& d = device();
  const vk::ScopedTuning tune(d.ctx().profile(), {{"device.arena.block_mib", 8}});
  const gpu::DeviceStats s0 = d.stats();
  std::vector<Tensor> ts;
  std::vector<Mat<float>> want;
  for (int i = 0; i < 5; ++i) {  // 5 x ~1 MiB (odd sizes): fits the 8 MiB block the first one opens (or the current)
    want.push_back(randn(g, 1, 262144 + 37 * i));
    ts.push_back(Tensor::resident(d, 1, want.back().cols()));
    d.upload(ts.back().buffer_mut(d), want.back().data(), ts.back().bytes());
  }
  CHECK(d.stats().resident_buffers - s0.resident_buffers == 5);
  CHECK(d.stats().resident_blocks - s0.resident_blocks <= 1);
  const uint64_t blocks = d.stats().resident_blocks;
  // 72 MiB: a block of its own, at least that large (larger than any block an earlier test in the process may have left
  // room in: lavapipe's default blocks are 64 MiB)
  const Tensor big = Tensor::resident(d, 1, (72 << 20) / 4);
  CHECK(d.stats().resident_blocks == blocks + 1);
  for (int i = 0; i < 5; ++i) REQUIRE(ts[size_t(i)].f32() == want[size_t(i)]);
}

// Per-dispatch profiling (Device::set_dispatch_profile, experiment --dispatches): one entry per dispatch, in issue
// order, named by pipeline; results unchanged; nothing recorded while off.
TEST_CASE("vk device: per-dispatch timestamps name every dispatch and change no result", "[vk][device]") {
  std::mt19937_64 g(5);
  gpu::Device& d = device();
  const gpu::Variant& add = gpu::Registry::get().variant("add", "vulkan:elementwise");
  gpu::VariantCtx ctx;
  ctx.dev = &d;
  const Tensor a = Tensor::from(randn(g, 4, 300)), b = Tensor::from(randn(g, 4, 300));
  const auto run_add = [&] {
    gpu::OpArgs args{{{"a", a}, {"b", b}}, {}, {}};
    add.run(ctx, args);
    return args.t.at("y").f32();
  };
  const Mat<float> plain = run_add();
  d.take_dispatch_times();
  d.set_dispatch_profile(true);
  const uint64_t before = d.stats().dispatches;
  const Mat<float> profiled = run_add();
  const Mat<float> again = run_add();
  const uint64_t n = d.stats().dispatches - before;
  d.set_dispatch_profile(false);
  const auto times = d.take_dispatch_times();
  REQUIRE(times.size() == n);
  REQUIRE(n >= 2);
  for (const auto& [name, ns] : times) {
    CHECK(!name.empty());
    CHECK(ns >= 0);
  }
  CHECK(times.front().first == times.back().first);  // the same kernel, twice
  CHECK(profiled == plain);
  CHECK(again == plain);
  run_add();
  CHECK(d.take_dispatch_times().empty());  // off: nothing kept
}
