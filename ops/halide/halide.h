// The Halide variants (ops/halide/halide.cpp): halide:<op>:<schedule> on the CPU and
// halide-vulkan:<op>:<schedule> through Halide's Vulkan runtime on hybridlab's device. Registered by
// register_halide_variants() (ops/all_ops.cpp).
#pragma once

namespace hl::gpu::halide {

// Threads of Halide's CPU thread pool (set to OpenMP's omp_get_max_threads() on first use, so the Halide
// and Eigen variants run on the same number of threads).
int cpu_threads();

// The instance, device and queue of Halide's Vulkan context in this process, and whether it has its memory allocator
// (all null before a halide-vulkan variant first ran, or after the device it was seeded with went). Built without the
// Vulkan schedules: all null.
struct VulkanContext {
  const void *instance = nullptr, *device = nullptr, *queue = nullptr;
  bool allocator = false;
};
VulkanContext vulkan_context();

}  // namespace hl::gpu::halide
