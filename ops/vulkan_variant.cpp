#include "ops/vulkan_variant.h"

namespace hl::gpu {

std::string coopmat_unavailable(const Device& d, bool emulated) {
  const auto& i = d.info();
  if (emulated)  // *_cm_emul.comp: f16 tiles, at most 32 accumulator elements per invocation
    return !i.shader_float16 ? "no shaderFloat16 (emulated cooperative matrices)"
           : i.min_subgroup_size < 8 ? "subgroups under 8 invocations (emulated cooperative matrices)" : "";
  if (!i.cooperative_matrix) return "no VK_KHR_cooperative_matrix (or not enabled: validation layers older than it)";
  if (!i.has_cooperative_matrix(16, 16, 16, 0, 1))
    return "no 16x16x16 f16*f16+f32->f32 subgroup cooperative matrix among the device's shapes";
  if (!i.shader_float16) return "no shaderFloat16";
  if (!i.vulkan_memory_model) return "no vulkanMemoryModel";
  if (!i.subgroup_size_control || !i.compute_full_subgroups) return "no full-subgroup control (computeFullSubgroups)";
  return "";
}

void check_binding(const Device& d, const Tensor& t, const std::string& op, const std::string& what) {
  if (t.bytes() > d.info().max_storage_buffer_range)
    fail("{}: {} [{}, {}] is {} MiB, beyond this device's storage-buffer range of {} MiB", op, what, t.rows(), t.cols(),
         t.bytes() >> 20, d.info().max_storage_buffer_range >> 20);
}

}  // namespace hl::gpu
