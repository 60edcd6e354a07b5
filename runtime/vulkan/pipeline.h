// Compute pipelines from SPIR-V with the one layout every kernel uses: N storage buffers at set 0,
// bindings 0..N-1, one push-constant range, specialization constants for the tunables (workgroup size
// via local_size_x_id, tile sizes, the subgroup size), and optionally a required subgroup size.
#pragma once

#include "runtime/vulkan/loader.h"

#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace hl::vk {

class Context;

struct SpecConstant {
  uint32_t id;                                   // layout(constant_id = id) / local_size_x_id = id
  std::variant<uint32_t, int32_t, float> value;  // all 4 bytes; a bool constant takes 0u or 1u
};

struct PipelineDesc {
  std::string name;                  // in errors and timing tables
  std::span<const uint32_t> spirv;   // only read during construction
  uint32_t buffers = 0;              // storage buffers at bindings 0..buffers-1
  uint32_t push_constant_bytes = 0;  // multiple of 4, at most maxPushConstantsSize
  std::vector<SpecConstant> spec;
  // 0: the context's pinned size (DeviceInfo::pipeline_subgroup_size) if it has one, else the device's default
  // (gl_SubgroupSize == DeviceInfo::subgroup_size). Otherwise a power of two in [min_subgroup_size,
  // max_subgroup_size]; Error where subgroup size control is missing.
  uint32_t required_subgroup_size = 0;
  bool full_subgroups = false;  // every subgroup of a workgroup is full (workgroup x a multiple of it)
  std::string entry = "main";
};

// Which of the storage buffers at bindings 0..buffers-1 (set 0) the SPIR-V module may write: bit b unless
// binding b's variable, or every member of its block, is decorated NonWritable (GLSL `readonly`). A binding
// the module does not declare is not written. Unparsable SPIR-V: every binding written (the safe answer).
uint32_t spirv_written_bindings(std::span<const uint32_t> spirv, uint32_t buffers);

class Pipeline {
 public:
  Pipeline(Context& ctx, const PipelineDesc& desc);
  ~Pipeline();
  Pipeline(Pipeline&& other) noexcept;
  Pipeline& operator=(Pipeline&& other) noexcept;
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  const std::string& name() const { return s_.name; }
  VkPipeline handle() const { return s_.pipeline; }
  VkPipelineLayout layout() const { return s_.layout; }
  VkDescriptorSetLayout set_layout() const { return s_.set_layout; }
  uint32_t buffer_count() const { return s_.buffers; }
  uint32_t push_constant_bytes() const { return s_.push_bytes; }
  uint32_t written_bindings() const { return s_.written; }  // spirv_written_bindings of its module

 private:
  void release() noexcept;
  void report_statistics(Context& ctx, const PipelineDesc& desc) const;

  struct State {  // all a move hands over, leaving an empty pipeline behind
    Context* ctx = nullptr;
    std::string name;
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    VkPipeline pipeline = VK_NULL_HANDLE;
    uint32_t buffers = 0, push_bytes = 0, written = 0;
  } s_;
};

}  // namespace hl::vk
