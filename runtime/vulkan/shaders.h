// Shaders come from two places. Build time: hybridlab_add_shaders (runtime/CMakeLists.txt) compiles each
// ops/<op>/<name>.comp with glslc and embeds the SPIR-V, plus the GLSL text of every shader and
// include file, in the binary. Run time: compile_glsl (shaderc) builds variants with #defines, with
// #include resolved from that embedded text, so neither path reads files at run time.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hl::vk {

// SPIR-V of ops/<op>/<name>.comp; Error naming the known shaders when there is none.
std::span<const uint32_t> embedded_spirv(std::string_view name);
// GLSL text of an embedded file: "runtime_selftest" (the .comp), "runtime_selftest.comp" or "common.glsl".
std::string_view embedded_glsl(std::string_view name);
std::vector<std::string> embedded_shader_names();

using Defines = std::map<std::string, std::string>;  // NAME -> value ("" for a bare #define NAME)

// GLSL compute shader -> SPIR-V for Vulkan 1.2 (as glslc at build time). `source_or_name` is the GLSL
// text, or, when it has no newline, the name of an embedded shader. `name` labels messages (default:
// the embedded file's name, else "shader.comp"). Error carries the compiler's messages.
std::vector<uint32_t> compile_glsl(std::string_view source_or_name, const Defines& defines = {},
                                   std::string_view name = {});

namespace detail {
// Provided by the registry that runtime/CMakeLists.txt generates.
struct EmbeddedShader {
  const char* name;  // "runtime_selftest"
  const uint32_t* words;
  size_t word_count;
};
struct EmbeddedSource {
  const char* file;  // "runtime_selftest.comp", "common.glsl"
  const char* text;
};
std::span<const EmbeddedShader> embedded_shaders();
std::span<const EmbeddedSource> embedded_sources();
}  // namespace detail

}  // namespace hl::vk
