// The Halide variants (ops/halide/halide.cpp): halide:<op>:<schedule> on the CPU and
// halide-vulkan:<op>:<schedule> through Halide's own Vulkan runtime. Registered by
// register_halide_variants() (ops/all_ops.cpp).
#pragma once

namespace hl::gpu::halide {

// Wall time in ns of the calling thread's last halide-vulkan pipeline call: from the call (inputs already
// on the device) until halide_device_sync of its outputs returned; host <-> device copies excluded. The
// experiments time halide-vulkan variants with it (Halide's runtime offers no timestamp queries).
double last_pipeline_ns();

// Threads of Halide's CPU thread pool (set to OpenMP's omp_get_max_threads() on first use, so the Halide
// and Eigen variants run on the same number of threads).
int cpu_threads();

}  // namespace hl::gpu::halide
