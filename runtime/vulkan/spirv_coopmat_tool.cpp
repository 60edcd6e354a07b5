// hybridlab_spirv_coopmat IN.spv OUT.inc: the build step of cooperative-matrix shaders (runtime/CMakeLists.txt).
// Patches glslc's module (spirv_coopmat.h), checks the result and writes it as a C array initializer.
#include "runtime/vulkan/spirv_coopmat.h"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s IN.spv OUT.inc\n", argv[0]);
    return 2;
  }
  try {
    std::ifstream in(argv[1], std::ios::binary);
    if (!in) throw std::runtime_error("cannot read the input");
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.size() % 4) throw std::runtime_error("size is not a whole number of words");
    std::vector<uint32_t> words(bytes.size() / 4);
    std::copy(bytes.begin(), bytes.end(), reinterpret_cast<char*>(words.data()));
    const auto patched = hl::vk::spirv::patch_cooperative_matrix(words);
    if (auto why = hl::vk::spirv::check_cooperative_matrix(patched); !why.empty()) throw std::runtime_error(why);
    std::ofstream out(argv[2], std::ios::binary);
    out << hl::vk::spirv::c_array(patched);
    if (!out.flush()) throw std::runtime_error("cannot write the output");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s: %s\n", argv[0], argv[1], e.what());
    return 1;
  }
  return 0;
}
