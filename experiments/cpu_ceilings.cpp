// CPU ceilings (cpu_ceilings.h): OpenMP threads, a steady clock, the median of 5 timed runs after one warm-up.
#include "experiments/cpu_ceilings.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace hl::exp {

namespace {

typedef float v8 __attribute__((vector_size(32)));  // 8 lanes: AVX2 at the build's x86-64-v3

template <class F> double median_seconds(F&& f) {
  f();
  std::vector<double> s;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(s.begin(), s.end());
  return s[2];
}

// The last-level cache's size from sysfs (0 where it is not there).
size_t llc_bytes() {
  size_t best = 0;
  for (int i = 0; i < 8; ++i) {
    std::ifstream f("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/size");
    std::string s;
    if (!(f >> s) || s.empty()) continue;
    size_t v = std::strtoull(s.c_str(), nullptr, 10);
    if (s.back() == 'K') v <<= 10;
    if (s.back() == 'M') v <<= 20;
    best = std::max(best, v);
  }
  return best;
}

// Sum of n floats (n a multiple of 64) in 8 independent vector accumulators.
float sum_floats(const float* p, size_t n) {
  v8 a[8] = {};
  for (size_t i = 0; i < n; i += 64)
    for (int k = 0; k < 8; ++k) {
      v8 x;
      std::memcpy(&x, p + i + 8 * k, sizeof x);
      a[k] += x;
    }
  v8 s = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
  float r = 0;
  for (int k = 0; k < 8; ++k) r += s[k];
  return r;
}

volatile float g_sink;

CpuCeilings measure(int threads) {
  CpuCeilings c;
  c.threads = threads;
  // read: 4x the last-level cache, at least 256 MiB and at most 1 GiB.
  const size_t bytes = std::clamp<size_t>(4 * llc_bytes(), size_t(256) << 20, size_t(1) << 30);
  const size_t n = bytes / 4 / (64 * size_t(threads)) * (64 * size_t(threads));
  c.buffer_mib = bytes >> 20;
  std::unique_ptr<float[]> buf(new float[n]);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (size_t i = 0; i < n; ++i) buf[i] = float(i % 1000) * 1e-3f;  // each thread's pages first touched by it
  const size_t per = n / size_t(threads);
  const double t_read = median_seconds([&] {
    float s = 0;
#pragma omp parallel num_threads(threads) reduction(+ : s)
    s += sum_floats(buf.get() + per * size_t(omp_get_thread_num()), per);
    g_sink = s;
  });
  c.read_gbps = double(n) * 4 / t_read * 1e-9;
  // cache: 128 KiB per thread, 256 passes.
  constexpr size_t kCache = 32768, kPasses = 256;
  const double t_cache = median_seconds([&] {
    float s = 0;
#pragma omp parallel num_threads(threads) reduction(+ : s)
    {
      const float* p = buf.get() + per * size_t(omp_get_thread_num());
      for (size_t r = 0; r < kPasses; ++r) s += sum_floats(p, kCache);
    }
    g_sink = s;
  });
  c.cache_read_gbps = double(threads) * kCache * 4 * kPasses / t_cache * 1e-9;
  // FMA: 12 independent chains per thread (two FMA units of latency 4-5 kept busy).
  constexpr size_t kIters = 1 << 21;
  const double t_fma = median_seconds([&] {
    float s = 0;
#pragma omp parallel num_threads(threads) reduction(+ : s)
    {
      __m256 a[12];
      for (int k = 0; k < 12; ++k) a[k] = _mm256_set1_ps(float(k) * 1e-3f + float(omp_get_thread_num()) * 1e-6f);
      const __m256 b = _mm256_set1_ps(0.999f), d = _mm256_set1_ps(1e-4f);
      for (size_t i = 0; i < kIters; ++i)
        for (int k = 0; k < 12; ++k) a[k] = _mm256_fmadd_ps(a[k], b, d);
      for (int k = 0; k < 12; ++k) s += a[k][k % 8];
    }
    g_sink = s;
  });
  c.f32_gflops = double(threads) * kIters * 12 * 8 * 2 / t_fma * 1e-9;
  return c;
}

std::mutex g_mutex;
std::map<int, CpuCeilings> g_cache;

}  // namespace

bool cpu_ceilings_measured(int threads) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_cache.count(threads) > 0;
}

const CpuCeilings& cpu_ceilings(int threads) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto& cache = g_cache;
  auto it = cache.find(threads);
  if (it == cache.end()) it = cache.emplace(threads, measure(std::max(threads, 1))).first;
  return it->second;
}

}  // namespace hl::exp
