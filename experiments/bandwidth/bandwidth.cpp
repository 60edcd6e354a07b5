// bandwidth: the device's measured ceilings, the roofline every other report divides by.
// read: one pass over a large buffer (bytes = size); copy: size read + size written; f32 FMA peak; the f16 matrix
// peak on cooperative matrices where the device has them.
// Buffers are far larger than any cache (1 GiB; QUICK: 64 MiB). Median of 20 timed runs after warm-up.
#include "experiments/harness.h"
#include "ops/vulkan_variant.h"
#include "plan/prefetch.h"

namespace hl::exp {

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void run(Context& cx, nlohmann::json& report) {
  gpu::Device& d = cx.dev;
  const size_t bytes = size_t(cx.quick ? 64 : 1024) << 20;
  const uint32_t n = uint32_t(bytes / 16), wg = 256;
  const uint32_t groups = std::min<uint32_t>(n / wg, d.info().type == VK_PHYSICAL_DEVICE_TYPE_CPU ? 64 : 8192);
  gpu::BufferPtr src = d.alloc(bytes), dst = d.alloc(bytes), partial = d.alloc(size_t(groups) * 4);
  gpu::BufferPtr sink_prev = d.alloc(1024);  // bw_read's unread binding 2 where no read comes before
  // Fill the source (non-zero) with the copy kernel's help: one upload of 1 MiB, then doubling copies.
  {
    std::vector<float> chunk(1 << 18);
    for (size_t i = 0; i < chunk.size(); ++i) chunk[i] = float(i % 1000) * 1e-3f + 0.5f;
    d.upload(src, chunk.data(), chunk.size() * 4);
    for (size_t have = chunk.size() * 4; have < bytes; have *= 2) d.copy(src, src, std::min(have, bytes - have), 0, have);
    d.sync();
  }
  struct Push {
    uint32_t n, groups, base;
  } pc{n, groups, 0};
  const auto& rd = d.pipeline("bw_read", {{0, wg}}, 3, sizeof pc);
  const auto& cp = d.pipeline("bw_copy", {{0, wg}}, 2, sizeof pc);
  auto time = [&](auto&& rec) {
    for (int i = 0; i < 3; ++i) d.time_ns(rec);
    std::vector<double> ns;
    for (int i = 0; i < cx.opt.runs; ++i) ns.push_back(d.time_ns(rec));
    return median_of(ns);
  };
  const double t_read = time([&] { d.dispatch(rd, {src, partial, sink_prev}, pc, groups); });
  const double t_copy = time([&] { d.dispatch(cp, {src, dst}, pc, groups); });
  // Compute: enough invocations to fill any GPU, enough rounds to dwarf launch cost.
  const uint32_t fma_groups = d.info().type == VK_PHYSICAL_DEVICE_TYPE_CPU ? 64 : 16384;
  struct Fma {
    uint32_t iters;
    float a, b;
  } fp{cx.quick ? 512u : 4096u, 0.999f, 0.001f};
  gpu::BufferPtr sink = d.alloc(size_t(fma_groups) * wg * 4);
  const auto& fm = d.pipeline("peak_fma", {{0, wg}}, 1, sizeof fp);
  const double t_fma = time([&] { d.dispatch(fm, {sink}, fp, fma_groups); });
  const double flops = double(fma_groups) * wg * fp.iters * 16;

  const double read = double(bytes) / t_read, copy = 2.0 * double(bytes) / t_copy, tflops = flops / t_fma * 1e-3;
  report["ceilings"] = {{"read_GBps", read}, {"copy_GBps", copy}, {"f32_TFLOPs", tflops},
                        {"buffer_MiB", bytes >> 20}, {"method", "median of timestamped runs after warm-up; copy counts bytes read + written"}};
  report["cases"] = nlohmann::json::array(
      {{{"label", "read"}, {"bytes", double(bytes)}, {"time_us", t_read * 1e-3}, {"GBps", read}},
       {{"label", "copy"}, {"bytes", 2.0 * double(bytes)}, {"time_us", t_copy * 1e-3}, {"GBps", copy}},
       {{"label", "f32 fma"}, {"flops", flops}, {"time_us", t_fma * 1e-3}, {"TFLOPs", tflops}}});
  // The f16 matrix ceiling, where the device has cooperative matrices: four subgroups per workgroup, each four
  // independent 16x16x16 products per round (peak_f16_cm.comp).
  double f16 = 0;
  if (gpu::coopmat_unavailable(d, false).empty()) {
    const uint32_t wgm = 4 * d.info().max_subgroup_size, groups_m = 16384;
    Fma fm16{cx.quick ? 256u : 2048u, 0.5f, 0.001f};
    gpu::BufferPtr sink16 = d.alloc(size_t(groups_m) * wgm * 4);
    const auto& pm = d.pipeline("peak_f16_cm", {{0, wgm}}, 1, sizeof fm16, d.info().subgroup_size_control && d.info().compute_full_subgroups);
    const double t_m = time([&] { d.dispatch(pm, {sink16}, fm16, groups_m); });
    const double mflops = double(groups_m) * 4 * fm16.iters * 4 * 8192;
    f16 = mflops / t_m * 1e-3;
    report["ceilings"]["f16_matrix_TFLOPs"] = f16;
    report["cases"].push_back({{"label", "f16 matrix (cooperative, f32 accumulation)"}, {"flops", mflops}, {"time_us", t_m * 1e-3}, {"TFLOPs", f16}});
  }
  // Reads of decode sizes (a decode step's mat-vecs read 0.1 to 15 MB each): what one dispatch of a plain
  // coalesced read achieves at that size, chained as a decode stream chains its kernels (kChain reads of distinct
  // regions in one submission, a barrier between each two; each run's regions after the previous run's, so that
  // they come from memory, not the last level cache). Per read: the chain's time / kChain, the barrier included.
  // Then the same chain with each read's region prefetched beside the read before it (plan/prefetch.h, as the decode
  // step prefetches an op's weights beside the op before it): the cache's part in a chained read of that size.
  constexpr uint32_t kChain = 16;
  gpu::BufferPtr part[3] = {partial, d.alloc(size_t(groups) * 4), d.alloc(size_t(groups) * 4)};
  nlohmann::json small = nlohmann::json::array();
  for (size_t mib = 1; mib * kChain <= (bytes >> 20) && mib <= 64; mib *= 2) {
    const uint32_t ns = uint32_t((mib << 20) / 16), gs = std::min<uint32_t>(ns / wg, groups);
    const uint32_t regions = uint32_t(bytes / (mib << 20));
    uint32_t next = 0;  // region index, rotating through the buffer
    // Read j writes its partials to part[j % 3] and binds read j - 1's as its unread binding 2, so each read waits
    // for the one before it; a prefetch placed after part[(j - 1) % 3] runs beside read j.
    // 0 plain, 1 prefetched (volatile loads), 2 the same region every read (cached after the first), 3 prefetched with
    // plain loads (plan/prefetch_sink.comp).
    auto chain = [&](int mode) {
      const bool prefetched = mode == 1 || mode == 3;
      const vk::ScopedTuning kind(d.ctx().profile(), {{"decode.prefetch.volatile", mode == 3 ? 0u : 1u}});
      for (uint32_t j = 0; j < kChain; ++j, next = mode == 2 ? next : (next + 1) % regions) {
        const gpu::BufferPtr& before = j == 0 ? sink_prev : part[(j + 2) % 3];
        if (prefetched && j + 1 < kChain)  // the next read's region, beside this read
          gpu::prefetch(d, before, {{src, uint64_t((next + 1) % regions) * ns * 16, uint64_t(ns) * 16}});
        Push sp{ns, gs, next * ns};
        d.dispatch(rd, {src, part[j % 3], before}, sp, gs);
      }
    };
    const double t = time([&] { chain(0); }) / kChain, tp = time([&] { chain(1); }) / kChain;
    const double tc = time([&] { chain(2); next = (next + 1) % regions; }) / kChain;
    const double ts = time([&] { chain(3); }) / kChain;
    const double gbps = double(mib << 20) / t, gbps_p = double(mib << 20) / tp;
    small.push_back({{"MiB", mib}, {"time_us", t * 1e-3}, {"GBps", gbps}, {"of_read_ceiling", gbps / read},
                     {"prefetched_time_us", tp * 1e-3}, {"prefetched_GBps", gbps_p}, {"cached_time_us", tc * 1e-3},
                     {"prefetched_plain_time_us", ts * 1e-3}});
    std::printf("  read %zu MiB, %u chained: %.2f us per read, %.1f GB/s (%.0f%% of the read ceiling); prefetched beside "
                "the read before: %.2f us (plain loads: %.2f); one region every read: %.2f us\n", mib, kChain, t * 1e-3, gbps,
                100 * gbps / read, tp * 1e-3, ts * 1e-3, tc * 1e-3);
  }
  report["decode_size_reads"] = {{"chain", kChain},
                                 {"method", "per read: time of kChain chained reads of distinct regions (a barrier between "
                                            "each two) / kChain; regions rotate through the buffer across runs; "
                                            "prefetched: each region also read by plan/prefetch.h's kernel (a word per "
                                            "32-byte sector; volatile loads, or plain ones) beside the read before it (the first read is not); one region: every read of the chain reads the "
                                            "same region (all but the first from the last-level cache where it fits)"},
                                 {"reads", small}};
  std::printf("%s: read %.1f GB/s, copy %.1f GB/s (read + write), f32 FMA %.2f TFLOP/s, f16 matrix %.1f TFLOP/s (%zu MiB buffers)\n",
              d.info().name.c_str(), read, copy, tflops, f16, bytes >> 20);
}

}  // namespace

Experiment bandwidth_experiment() {
  return {"bandwidth", "measured read and copy bandwidth and f32 FMA rate: the roofline of every other report", {}, run};
}

}  // namespace hl::exp
