// The Halide variants (ops/halide/halide.cpp): halide:<op>:<schedule> on the CPU and
// halide-vulkan:<op>:<schedule> through Halide's Vulkan runtime on hybridlab's device. Registered by
// register_halide_variants() (ops/all_ops.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hl::gpu::halide {

// Threads of Halide's CPU thread pool (set to OpenMP's omp_get_max_threads() on first use, so the Halide
// and Eigen variants run on the same number of threads).
int cpu_threads();

// The sweep points built (hybridlab_halide_sweep in the ops' halide.cmake): each must be registered as a variant.
int sweep_points_built();

// The instance, device and queue of Halide's Vulkan context in this process, and whether it has its memory allocator
// (all null before a halide-vulkan variant first ran, or after the device it was seeded with went). Built without the
// Vulkan schedules: all null.
struct VulkanContext {
  const void *instance = nullptr, *device = nullptr, *queue = nullptr;
  bool allocator = false;
};
VulkanContext vulkan_context();

// halide-vulkan's kernels in this process so far: those dispatched on hybridlab's stream (Device::dispatch), those
// Halide's runtime submitted and waited for itself (tunable halide.vulkan.own_dispatch = 0, or a kernel hybridlab
// cannot take), and the runtime's own copies and syncs (a stage a schedule leaves on the host).
struct VulkanCounts {
  uint64_t dispatched = 0, runtime_kernels = 0, runtime_transfers = 0;
};
VulkanCounts vulkan_counts();

// Every kernel Halide's runtime was handed so far: its hybridlab pipeline name, its SPIR-V as Halide made it and as
// hybridlab dispatches it (empty, with the reason, where it cannot).
struct VulkanKernel {
  std::string name;
  std::vector<uint32_t> original, patched;
  std::string unpatchable;
};
std::vector<VulkanKernel> vulkan_kernels();

}  // namespace hl::gpu::halide
