// Lookup in the embedded shader registry, and run-time GLSL compilation through shaderc.
#include "runtime/vulkan/shaders.h"

#include "runtime/vulkan/loader.h"

#include <fmt/format.h>
#include <shaderc/shaderc.h>

#include <algorithm>
#include <memory>

namespace hl::vk {
namespace {

const detail::EmbeddedSource* find_source(std::string_view file) {
  for (const auto& s : detail::embedded_sources())
    if (file == s.file) return &s;
  return nullptr;
}

std::string known_names() {
  std::string s;
  for (const auto& n : embedded_shader_names()) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "none" : s;
}

// #include "x.glsl" resolves to the embedded x.glsl (ops/shaders/ or an op folder), whatever directory is written.
shaderc_include_result* resolve_include(void*, const char* requested, int, const char*, size_t) {
  std::string_view file = requested;
  if (auto slash = file.find_last_of('/'); slash != std::string_view::npos) file.remove_prefix(slash + 1);
  auto* r = new shaderc_include_result{};
  if (const auto* s = find_source(file)) {
    r->source_name = s->file;
    r->source_name_length = std::string_view(s->file).size();
    r->content = s->text;
    r->content_length = std::string_view(s->text).size();
  } else {
    auto* message = new std::string(fmt::format("'{}' is not an embedded shader file", requested));
    r->content = message->c_str();  // shaderc reports `content` as the error when source_name is empty
    r->content_length = message->size();
    r->user_data = message;
  }
  return r;
}

void release_include(void*, shaderc_include_result* r) {
  delete static_cast<std::string*>(r->user_data);
  delete r;
}

}  // namespace

std::span<const uint32_t> embedded_spirv(std::string_view name) {
  for (const auto& s : detail::embedded_shaders())
    if (name == s.name) return {s.words, s.word_count};
  throw Error(fmt::format("no embedded shader '{}' (known: {}); add {}.comp to an op folder (ops/<op>/)", name,
                          known_names(), name));
}

std::string_view embedded_glsl(std::string_view name) {
  const auto* s = find_source(name);
  if (!s) s = find_source(std::string(name) + ".comp");
  if (!s) throw Error(fmt::format("no embedded GLSL file '{}' (shaders: {})", name, known_names()));
  return s->text;
}

std::vector<std::string> embedded_shader_names() {
  std::vector<std::string> names;
  for (const auto& s : detail::embedded_shaders()) names.emplace_back(s.name);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<uint32_t> compile_glsl(std::string_view source_or_name, const Defines& defines, std::string_view name) {
  std::string_view text = source_or_name;
  std::string file = name.empty() ? "shader.comp" : std::string(name);
  if (source_or_name.find('\n') == std::string_view::npos) {  // a shader name, not GLSL text
    text = embedded_glsl(source_or_name);
    if (name.empty()) file = std::string(source_or_name) + ".comp";
  }

  std::unique_ptr<shaderc_compiler, decltype(&shaderc_compiler_release)> compiler(shaderc_compiler_initialize(),
                                                                                  shaderc_compiler_release);
  std::unique_ptr<shaderc_compile_options, decltype(&shaderc_compile_options_release)> options(
      shaderc_compile_options_initialize(), shaderc_compile_options_release);
  if (!compiler || !options) throw Error("shaderc_compiler_initialize failed");
  // Same settings as the build-time glslc call (--target-env=vulkan1.2 -O).
  shaderc_compile_options_set_target_env(options.get(), shaderc_target_env_vulkan, shaderc_env_version_vulkan_1_2);
  shaderc_compile_options_set_optimization_level(options.get(), shaderc_optimization_level_performance);
  shaderc_compile_options_set_include_callbacks(options.get(), resolve_include, release_include, nullptr);
  for (const auto& [key, value] : defines)
    shaderc_compile_options_add_macro_definition(options.get(), key.data(), key.size(), value.data(), value.size());

  std::unique_ptr<shaderc_compilation_result, decltype(&shaderc_result_release)> result(
      shaderc_compile_into_spv(compiler.get(), text.data(), text.size(), shaderc_compute_shader, file.c_str(), "main",
                               options.get()),
      shaderc_result_release);
  if (!result || shaderc_result_get_compilation_status(result.get()) != shaderc_compilation_status_success) {
    std::string message = result ? shaderc_result_get_error_message(result.get()) : "no result";
    while (!message.empty() && message.back() == '\n') message.pop_back();
    std::replace(message.begin(), message.end(), '\n', ';');
    throw Error(fmt::format("shaderc_compile_into_spv failed for {}: {}", file, message));
  }
  const size_t bytes = shaderc_result_get_length(result.get());
  std::vector<uint32_t> words(bytes / 4);
  std::copy_n(shaderc_result_get_bytes(result.get()), bytes, reinterpret_cast<char*>(words.data()));
  return words;
}

}  // namespace hl::vk
