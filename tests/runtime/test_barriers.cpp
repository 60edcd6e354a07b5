// Barriers and order between dispatches (runtime/device.h): dispatches are queued and recorded level by level, a
// level one past the deepest queued dispatch they conflict with (read after write, write after write, write
// after read, on overlapping buffer ranges; which bindings a kernel writes read from its SPIR-V), one compute
// barrier between levels. Counted through DeviceStats::barriers; the results are checked too: lavapipe runs
// what is recorded in the recorded order, so a wrong reordering shows in the numbers (a missing barrier would
// not, there: it shows in the counts).
#include "runtime/vulkan/shaders.h"
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

TEST_CASE("vk: which bindings a kernel writes comes from its SPIR-V", "[vk][barriers]") {
  CHECK(vk::spirv_written_bindings(vk::embedded_spirv("add"), 3) == 0b100u);  // a, b readonly; y writeonly
  // ssm_scan_columns: q, k, v, beta, g readonly; the state read and written in place; o writeonly.
  CHECK(vk::spirv_written_bindings(vk::embedded_spirv("ssm_scan_columns"), 7) == ((1u << 5) | (1u << 6)));
  const std::vector<uint32_t> junk{1, 2, 3};
  CHECK(vk::spirv_written_bindings(junk, 3) == 0b111u);  // not SPIR-V: every binding written (the safe answer)
}

TEST_CASE("vk: dispatches get a barrier only where they depend on an earlier one", "[vk][barriers]") {
  gpu::Device& d = device();
  d.sync();
  const int n = 1000;
  std::mt19937_64 g(41);
  Tensor a = Tensor::from(randn(g, 1, n)), b = Tensor::from(randn(g, 1, n)), c = Tensor::from(randn(g, 1, n));
  const auto& p = d.pipeline("add", {{0, 64}}, 3, 4);
  const uint32_t groups = (n + 63) / 64;
  auto add = [&](const Tensor& x, const Tensor& y, Tensor& out) {
    d.dispatch(p, {x.buffer(d), y.buffer(d), out.buffer_mut(d)}, uint32_t(n), groups);
  };
  Tensor s1 = Tensor::device(d, 1, n), s2 = Tensor::device(d, 1, n), s3 = Tensor::device(d, 1, n);
  a.buffer(d), b.buffer(d), c.buffer(d);  // uploads (transfers, with their own barriers) first
  const uint64_t before = d.stats().barriers;
  add(a, b, s1);  // s1 = a + b
  add(a, c, s2);  // s2 = a + c: independent of s1, no barrier
  CHECK(d.stats().barriers == before);
  add(s1, s2, s3);  // reads both: one barrier
  CHECK(d.stats().barriers == before + 1);
  add(a, b, s1);  // writes s1, which the last dispatch read: a barrier (write after read)
  CHECK(d.stats().barriers == before + 2);
  add(b, c, s2);  // writes s2, read by the s3 dispatch, but a barrier came after that: none
  CHECK(d.stats().barriers == before + 2);
  add(c, c, s2);  // writes s2 again (write after write): a barrier
  CHECK(d.stats().barriers == before + 3);
  // Expected: s1 = a + b, s2 = 2c, s3 = (a + b) + (a + c).
  const auto &A = a.f32(), &B = b.f32(), &C = c.f32();
  const auto &S1 = s1.f32(), &S2 = s2.f32(), &S3 = s3.f32();
  for (int i = 0; i < n; ++i) {
    REQUIRE(S1(0, i) == A(0, i) + B(0, i));
    REQUIRE(S2(0, i) == C(0, i) + C(0, i));
    REQUIRE(S3(0, i) == (A(0, i) + B(0, i)) + (A(0, i) + C(0, i)));
  }
  require_no_validation_messages();
}

TEST_CASE("vk: device.stream.elide_barriers 0 puts a barrier before every dependent-or-not dispatch", "[vk][barriers]") {
  vk::ContextOptions o;
  o.tune = "device.stream.elide_barriers=0";
  gpu::Device d(o);
  const int n = 256;
  std::mt19937_64 g(42);
  Tensor a = Tensor::from(randn(g, 1, n)), b = Tensor::from(randn(g, 1, n));
  Tensor s1 = Tensor::device(d, 1, n), s2 = Tensor::device(d, 1, n);
  a.buffer(d), b.buffer(d);
  const auto& p = d.pipeline("add", {{0, 64}}, 3, 4);
  const uint64_t before = d.stats().barriers;
  d.dispatch(p, {a.buffer(d), b.buffer(d), s1.buffer_mut(d)}, uint32_t(n), 4u);
  d.dispatch(p, {b.buffer(d), a.buffer(d), s2.buffer_mut(d)}, uint32_t(n), 4u);  // independent, still a barrier
  CHECK(d.stats().barriers == before + 1);
  d.sync();  // the list ends ordered: a second barrier
  CHECK(d.stats().barriers == before + 2);
  CHECK(s1.f32()(0, 7) == a.f32()(0, 7) + b.f32()(0, 7));
  CHECK(s2.f32()(0, 7) == b.f32()(0, 7) + a.f32()(0, 7));
}

TEST_CASE("vk: a captured segment ends ordered and counts its barriers", "[vk][barriers]") {
  gpu::Device& d = device();
  d.sync();
  const int n = 256;
  std::mt19937_64 g(43);
  Tensor a = Tensor::from(randn(g, 1, n)), b = Tensor::from(randn(g, 1, n));
  Tensor s1 = Tensor::device(d, 1, n), s2 = Tensor::device(d, 1, n), s3 = Tensor::device(d, 1, n);
  a.buffer(d), b.buffer(d), s1.buffer_mut(d), s2.buffer_mut(d), s3.buffer_mut(d);
  d.sync();
  const auto& p = d.pipeline("add", {{0, 64}}, 3, 4);
  d.begin_capture();
  d.dispatch(p, {a.buffer(d), b.buffer(d), s1.buffer_mut(d)}, uint32_t(n), 4u);
  d.dispatch(p, {a.buffer(d), a.buffer(d), s2.buffer_mut(d)}, uint32_t(n), 4u);  // independent
  d.dispatch(p, {s1.buffer(d), s2.buffer(d), s3.buffer_mut(d)}, uint32_t(n), 4u);  // a barrier first
  const auto seg = d.end_segment();  // and one at its end
  d.end_capture();
  REQUIRE(seg);
  CHECK(seg->dispatches == 3);
  CHECK(seg->barriers == 2);
  const uint64_t replayed = d.stats().replayed_barriers;
  d.submit(seg, false);
  d.submit(seg);  // again: its barriers count as replayed
  d.sync();
  CHECK(d.stats().replayed_barriers == replayed + 2);
  for (int i : {0, 100, 255}) CHECK(s3.f32()(0, i) == (a.f32()(0, i) + b.f32()(0, i)) + (a.f32()(0, i) + a.f32()(0, i)));
}

TEST_CASE("vk: segments and the stream's commands between them go to the GPU in one submission, in order", "[vk][barriers]") {
  gpu::Device& d = device();
  d.sync();
  const int n = 256;
  std::mt19937_64 g(47);
  Tensor a = Tensor::from(randn(g, 1, n)), b = Tensor::from(randn(g, 1, n)), s0 = Tensor::from(randn(g, 1, n));
  Tensor s1 = s0.clone(), s2 = Tensor::device(d, 1, n);
  a.buffer(d), b.buffer(d), s1.buffer(d), s2.buffer_mut(d);
  d.sync();
  const auto& p = d.pipeline("add", {{0, 64}}, 3, 4);
  d.begin_capture();
  d.dispatch(p, {s1.buffer(d), a.buffer(d), s2.buffer_mut(d)}, uint32_t(n), 4u);  // s2 = s1 + a
  const auto seg = d.end_segment();
  d.end_capture();
  REQUIRE(seg);
  const uint64_t submits = d.stats().submits;
  d.submit(seg, false);
  d.dispatch(p, {s2.buffer(d), b.buffer(d), s1.buffer_mut(d)}, uint32_t(n), 4u);  // s1 = s2 + b, between the two
  d.submit(seg);
  CHECK(d.stats().submits == submits);  // queued, not submitted yet
  d.sync();
  CHECK(d.stats().submits == submits + 1);
  // Out of order, s2 would be s0 + a (the stream's dispatch last) or s1 would miss a term.
  const auto &A = a.f32(), &B = b.f32(), &S0 = s0.f32(), &S1 = s1.f32(), &S2 = s2.f32();
  for (int i = 0; i < n; ++i) {
    REQUIRE(S1(0, i) == (S0(0, i) + A(0, i)) + B(0, i));
    REQUIRE(S2(0, i) == ((S0(0, i) + A(0, i)) + B(0, i)) + A(0, i));
  }
  require_no_validation_messages();
}

TEST_CASE("vk: independent chains issued one after the other run level by level", "[vk][barriers]") {
  gpu::Device& d = device();
  d.sync();
  const int n = 300;
  std::mt19937_64 g(53);
  Tensor a = Tensor::from(randn(g, 1, n)), b = Tensor::from(randn(g, 1, n));
  Tensor a1 = Tensor::device(d, 1, n), a2 = Tensor::device(d, 1, n), b1 = Tensor::device(d, 1, n), b2 = Tensor::device(d, 1, n);
  a.buffer(d), b.buffer(d);
  d.sync();
  const auto& p = d.pipeline("add", {{0, 64}}, 3, 4);
  auto add = [&](const Tensor& x, const Tensor& y, Tensor& out) {
    d.dispatch(p, {x.buffer(d), y.buffer(d), out.buffer_mut(d)}, uint32_t(n), 5u);
  };
  const uint64_t before = d.stats().barriers;
  add(a, a, a1);   // level 1
  add(a1, a, a2);  // level 2
  add(b, b, b1);   // level 1 again: runs beside a1, not after a2
  add(b1, b, b2);  // level 2
  CHECK(d.stats().barriers == before + 1);  // in issue order it would take 2
  add(a2, b2, a1);  // reads both level-2 results and rewrites a1 (read at level 2): level 3
  CHECK(d.stats().barriers == before + 2);
  const auto &A = a.f32(), &B = b.f32(), &A1 = a1.f32(), &A2 = a2.f32(), &B2 = b2.f32();
  for (int i = 0; i < n; ++i) {
    REQUIRE(A2(0, i) == (A(0, i) + A(0, i)) + A(0, i));
    REQUIRE(B2(0, i) == (B(0, i) + B(0, i)) + B(0, i));
    REQUIRE(A1(0, i) == A2(0, i) + B2(0, i));
  }
  require_no_validation_messages();
}

TEST_CASE("vk: device.stream.reorder 0 keeps the issue order", "[vk][barriers]") {
  vk::ContextOptions o;
  o.tune = "device.stream.reorder=0";
  gpu::Device d(o);
  const int n = 200;
  std::mt19937_64 g(59);
  Tensor a = Tensor::from(randn(g, 1, n)), b = Tensor::from(randn(g, 1, n));
  Tensor a1 = Tensor::device(d, 1, n), a2 = Tensor::device(d, 1, n), b1 = Tensor::device(d, 1, n), b2 = Tensor::device(d, 1, n);
  a.buffer(d), b.buffer(d);
  d.sync();
  const auto& p = d.pipeline("add", {{0, 64}}, 3, 4);
  const uint64_t before = d.stats().barriers;
  d.dispatch(p, {a.buffer(d), a.buffer(d), a1.buffer_mut(d)}, uint32_t(n), 4u);
  d.dispatch(p, {a1.buffer(d), a.buffer(d), a2.buffer_mut(d)}, uint32_t(n), 4u);  // a barrier
  d.dispatch(p, {b.buffer(d), b.buffer(d), b1.buffer_mut(d)}, uint32_t(n), 4u);   // beside a2, after it
  d.dispatch(p, {b1.buffer(d), b.buffer(d), b2.buffer_mut(d)}, uint32_t(n), 4u);  // a barrier
  CHECK(d.stats().barriers == before + 2);
  const auto &A = a.f32(), &B = b.f32(), &A2 = a2.f32(), &B2 = b2.f32();
  for (int i = 0; i < n; ++i) {
    REQUIRE(A2(0, i) == (A(0, i) + A(0, i)) + A(0, i));
    REQUIRE(B2(0, i) == (B(0, i) + B(0, i)) + B(0, i));
  }
}

TEST_CASE("vk: device.stream.late records each dispatch at the latest level its dependents allow", "[vk][barriers]") {
  vk::ContextOptions o;
  o.tune = "device.stream.late=1";
  gpu::Device d(o);
  const int n = 300;
  std::mt19937_64 g(61);
  Tensor a = Tensor::from(randn(g, 1, n)), b = Tensor::from(randn(g, 1, n)), c = Tensor::from(randn(g, 1, n));
  Tensor s1 = Tensor::device(d, 1, n), s2 = Tensor::device(d, 1, n), s3 = Tensor::device(d, 1, n),
         s4 = Tensor::device(d, 1, n), s5 = Tensor::device(d, 1, n);
  a.buffer(d), b.buffer(d), c.buffer(d);
  d.sync();
  const auto& p = d.pipeline("add", {{0, 64}}, 3, 4);
  auto add = [&](const Tensor& x, const Tensor& y, Tensor& out) {
    d.dispatch(p, {x.buffer(d), y.buffer(d), out.buffer_mut(d)}, uint32_t(n), uint32_t((n + 63) / 64));
  };
  const uint64_t before = d.stats().barriers, moves = d.stats().late_moves;
  add(a, b, s1);    // level 1
  add(c, c, s2);    // level 1 at the earliest; its reader is at 4: recorded at 3
  add(s1, a, s3);   // 2
  add(s3, s3, s4);  // 3
  add(s2, s4, s5);  // 4
  add(c, a, s1);    // writes s1 after s3 read it: 3 at the earliest, 4 (the deepest) at the latest
  CHECK(d.stats().barriers == before + 3);  // four levels either way
  const auto &A = a.f32(), &B = b.f32(), &C = c.f32();
  const auto &S1 = s1.f32(), &S5 = s5.f32();
  CHECK(d.stats().late_moves == moves + 2);
  for (int i = 0; i < n; ++i) {
    const float r3 = (A(0, i) + B(0, i)) + A(0, i);
    REQUIRE(S5(0, i) == (C(0, i) + C(0, i)) + (r3 + r3));
    REQUIRE(S1(0, i) == C(0, i) + A(0, i));
  }
  require_no_validation_messages();
}
