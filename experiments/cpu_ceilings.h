// The host CPU's measured ceilings at a given thread count: what a CPU row of an experiment (the Eigen reference, a
// Halide CPU schedule) is divided by, as GPU rows are by the bandwidth experiment's device ceilings.
#pragma once
#include <cstddef>

namespace hl::exp {

struct CpuCeilings {
  int threads = 0;
  double read_gbps = 0;        // one pass over a buffer several times the last-level cache, split over the threads
  double cache_read_gbps = 0;  // each thread summing its own 128 KiB again and again (L2-resident)
  double f32_gflops = 0;       // independent 8-wide f32 FMA chains per thread
  size_t buffer_mib = 0;
};

// Measured once per thread count per process (about half a second), then cached.
const CpuCeilings& cpu_ceilings(int threads);
bool cpu_ceilings_measured(int threads);  // whether this process has measured them

}  // namespace hl::exp
