// Pipeline creation: layout, specialization, subgroup-size request, through the context's cache.
#include "runtime/vulkan/pipeline.h"

#include <map>
#include <set>

#include "runtime/vulkan/context.h"

#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <utility>

namespace hl::vk {

uint32_t spirv_written_bindings(std::span<const uint32_t> spirv, uint32_t buffers) {
  const uint32_t all = buffers >= 32 ? ~0u : (1u << buffers) - 1u;
  if (spirv.size() < 5 || spirv[0] != 0x07230203u) return all;
  enum : uint32_t { kTypeStruct = 30, kTypePointer = 32, kVariable = 59, kDecorate = 71, kMemberDecorate = 72 };
  enum : uint32_t { kNonWritable = 24, kBinding = 33, kDescriptorSet = 34 };
  std::map<uint32_t, uint32_t> binding, set, pointee, members, readonly_members, var_type;
  std::set<uint32_t> readonly_vars;
  for (size_t i = 5; i < spirv.size();) {
    const uint32_t op = spirv[i] & 0xFFFFu, n = spirv[i] >> 16;
    if (n == 0 || i + n > spirv.size()) return all;
    const uint32_t* w = &spirv[i + 1];
    if (op == kDecorate && n >= 3) {
      if (w[1] == kBinding && n >= 4) binding[w[0]] = w[2];
      if (w[1] == kDescriptorSet && n >= 4) set[w[0]] = w[2];
      if (w[1] == kNonWritable) readonly_vars.insert(w[0]);
    } else if (op == kMemberDecorate && n >= 4 && w[2] == kNonWritable) {
      ++readonly_members[w[0]];
    } else if (op == kTypeStruct && n >= 2) {
      members[w[0]] = n - 2;
    } else if (op == kTypePointer && n >= 4) {
      pointee[w[0]] = w[2];
    } else if (op == kVariable && n >= 4) {
      var_type[w[1]] = w[0];
    }
    i += n;
  }
  uint32_t written = 0;
  for (auto [var, b] : binding) {
    if (b >= buffers || b >= 32 || !var_type.count(var) || (set.count(var) && set[var] != 0)) continue;
    const uint32_t type = pointee.count(var_type[var]) ? pointee[var_type[var]] : 0;
    const bool readonly = readonly_vars.count(var) ||
                          (members.count(type) && members[type] > 0 && readonly_members[type] >= members[type]);
    if (!readonly) written |= 1u << b;
  }
  return written;
}

Pipeline::Pipeline(Context& ctx, const PipelineDesc& desc)
    : s_{.ctx = &ctx, .name = desc.name, .buffers = desc.buffers, .push_bytes = desc.push_constant_bytes} {
  const DeviceInfo& d = ctx.info();
  if (desc.spirv.empty()) throw Error(fmt::format("pipeline '{}': no SPIR-V", s_.name));
  s_.written = spirv_written_bindings(desc.spirv, desc.buffers);
  if (s_.push_bytes % 4 || s_.push_bytes > d.max_push_constants)
    throw Error(fmt::format("pipeline '{}': {} bytes of push constants (a multiple of 4, at most {} on {})", s_.name,
                            s_.push_bytes, d.max_push_constants, d.name));
  const uint32_t required = desc.required_subgroup_size ? desc.required_subgroup_size : d.pipeline_subgroup_size;
  if (const uint32_t s = required) {
    if (!d.subgroup_size_control || !d.compute_required_subgroup_size)
      throw Error(
          fmt::format("pipeline '{}' requires subgroup size {}, but {} cannot require a subgroup size in "
                      "compute shaders (no subgroup size control)",
                      s_.name, s, d.name));
    if (!std::has_single_bit(s) || s < d.min_subgroup_size || s > d.max_subgroup_size)
      throw Error(fmt::format("pipeline '{}' requires subgroup size {}; {} supports powers of two in [{}, {}]", s_.name,
                              s, d.name, d.min_subgroup_size, d.max_subgroup_size));
  }
  if (desc.full_subgroups && !d.compute_full_subgroups)
    throw Error(fmt::format("pipeline '{}' requires full subgroups, unsupported on {}", s_.name, d.name));

  const Functions& vk = ctx.fn();
  VkDevice dev = ctx.device();
  VkShaderModule module = VK_NULL_HANDLE;
  try {
    std::vector<VkDescriptorSetLayoutBinding> bindings(s_.buffers);
    for (uint32_t i = 0; i < s_.buffers; ++i)
      bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    VkDescriptorSetLayoutCreateInfo si{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    if (ctx.push_descriptors()) si.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
    si.bindingCount = s_.buffers;
    si.pBindings = bindings.data();
    check(vk.vkCreateDescriptorSetLayout(dev, &si, nullptr, &s_.set_layout), "vkCreateDescriptorSetLayout", s_.name);

    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, s_.push_bytes};
    VkPipelineLayoutCreateInfo li{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    li.setLayoutCount = 1;
    li.pSetLayouts = &s_.set_layout;
    li.pushConstantRangeCount = s_.push_bytes ? 1 : 0;
    li.pPushConstantRanges = &range;
    check(vk.vkCreatePipelineLayout(dev, &li, nullptr, &s_.layout), "vkCreatePipelineLayout", s_.name);

    VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    mi.codeSize = desc.spirv.size_bytes();
    mi.pCode = desc.spirv.data();
    check(vk.vkCreateShaderModule(dev, &mi, nullptr, &module), "vkCreateShaderModule", s_.name);

    // Every constant is 4 bytes, packed in the order given.
    std::vector<VkSpecializationMapEntry> entries;
    std::vector<uint32_t> data;
    for (const SpecConstant& c : desc.spec) {
      entries.push_back({c.id, uint32_t(data.size() * 4), 4});
      data.push_back(std::visit([](auto v) { return std::bit_cast<uint32_t>(v); }, c.value));
    }
    VkSpecializationInfo spec{uint32_t(entries.size()), entries.data(), data.size() * 4, data.data()};

    VkPipelineShaderStageRequiredSubgroupSizeCreateInfo size{
        VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
    size.requiredSubgroupSize = required;
    VkComputePipelineCreateInfo pi{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    pi.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    pi.stage.pNext = required ? &size : nullptr;
    if (desc.full_subgroups) pi.stage.flags |= VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
    pi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pi.stage.module = module;
    pi.stage.pName = desc.entry.c_str();
    pi.stage.pSpecializationInfo = entries.empty() ? nullptr : &spec;
    pi.layout = s_.layout;
    if (ctx.pipeline_stats()) pi.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    check(vk.vkCreateComputePipelines(dev, ctx.pipeline_cache(), 1, &pi, nullptr, &s_.pipeline),
          "vkCreateComputePipelines", fmt::format("pipeline '{}' on {}", s_.name, d.name));
    if (ctx.pipeline_stats()) report_statistics(ctx, desc);
  } catch (...) {
    if (module) vk.vkDestroyShaderModule(dev, module, nullptr);
    release();
    throw;
  }
  vk.vkDestroyShaderModule(dev, module, nullptr);
}

// One line per executable: the pipeline's name, its specialization constants and what the driver's compiler
// reports (NVIDIA: registers, shared memory; Mesa: instructions, spills, ...), for a kernel engineer's eyes.
void Pipeline::report_statistics(Context& ctx, const PipelineDesc& desc) const {
  const Functions& vk = ctx.fn();
  if (!vk.vkGetPipelineExecutablePropertiesKHR || !vk.vkGetPipelineExecutableStatisticsKHR) return;
  VkPipelineInfoKHR info{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
  info.pipeline = s_.pipeline;
  uint32_t n = 0;
  if (vk.vkGetPipelineExecutablePropertiesKHR(ctx.device(), &info, &n, nullptr) != VK_SUCCESS) return;
  std::string spec;
  for (const SpecConstant& c : desc.spec)
    spec += fmt::format("{}{}={}", spec.empty() ? "" : " ", c.id,
                        std::visit([](auto v) { return fmt::format("{}", v); }, c.value));
  for (uint32_t e = 0; e < n; ++e) {
    VkPipelineExecutableInfoKHR ei{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
    ei.pipeline = s_.pipeline;
    ei.executableIndex = e;
    uint32_t m = 0;
    if (vk.vkGetPipelineExecutableStatisticsKHR(ctx.device(), &ei, &m, nullptr) != VK_SUCCESS) continue;
    std::vector<VkPipelineExecutableStatisticKHR> stats(m, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
    if (vk.vkGetPipelineExecutableStatisticsKHR(ctx.device(), &ei, &m, stats.data()) < 0) continue;
    std::string line;
    for (uint32_t i = 0; i < m; ++i) {
      const VkPipelineExecutableStatisticKHR& st = stats[i];
      std::string v;
      switch (st.format) {
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: v = st.value.b32 ? "yes" : "no"; break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: v = fmt::format("{}", st.value.i64); break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: v = fmt::format("{}", st.value.u64); break;
        default: v = fmt::format("{:g}", st.value.f64); break;
      }
      line += fmt::format("{}{}={}", line.empty() ? "" : "; ", st.name, v);
    }
    std::fprintf(stderr, "pipeline stats: %s [%s] executable %u: %s\n", s_.name.c_str(), spec.c_str(), e,
                 line.c_str());
  }
}

Pipeline::~Pipeline() { release(); }

Pipeline::Pipeline(Pipeline&& o) noexcept : s_(std::exchange(o.s_, {})) {}

Pipeline& Pipeline::operator=(Pipeline&& o) noexcept {
  if (this != &o) release(), s_ = std::exchange(o.s_, {});
  return *this;
}

void Pipeline::release() noexcept {
  if (!s_.ctx) return;
  const Functions& vk = s_.ctx->fn();
  if (s_.pipeline) vk.vkDestroyPipeline(s_.ctx->device(), s_.pipeline, nullptr);
  if (s_.layout) vk.vkDestroyPipelineLayout(s_.ctx->device(), s_.layout, nullptr);
  if (s_.set_layout) vk.vkDestroyDescriptorSetLayout(s_.ctx->device(), s_.set_layout, nullptr);
}

}  // namespace hl::vk
