// The build-time cooperative-matrix patch (runtime/vulkan/spirv_coopmat.h) on hand-made modules, and the
// structure of the embedded cooperative-matrix shaders. No GPU: runs everywhere.
// Env HYBRIDLAB_SPIRV_VAL = a spirv-val that knows SPV_KHR_cooperative_matrix (SPIRV-Tools 2023.3 or later;
// Debian 12's 2023.1 does not): the embedded shaders are also validated with it (else that part is skipped).
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "runtime/vulkan/shaders.h"
#include "runtime/vulkan/spirv_coopmat.h"

using namespace hl::vk::spirv;
using Words = std::vector<uint32_t>;

namespace {

constexpr uint32_t kOpCapability = 17, kOpExtension = 10, kOpMemoryModel = 14, kOpTypeInt = 21, kOpTypeFloat = 22,
                   kOpConstant = 43, kCM = kOpTypeCooperativeMatrixKHR;

Words inst(uint32_t op, Words operands) {
  operands.insert(operands.begin(), (uint32_t(operands.size() + 1) << 16) | op);
  return operands;
}
Words module(uint32_t bound, std::initializer_list<Words> insts) {
  Words w{0x07230203, 0x00010500, 0, bound, 0};
  for (const auto& i : insts) w.insert(w.end(), i.begin(), i.end());
  return w;
}
std::vector<Words> instructions(const Words& m) {
  std::vector<Words> out;
  for (size_t i = 5; i < m.size(); i += m[i] >> 16) out.emplace_back(m.begin() + long(i), m.begin() + long(i + (m[i] >> 16)));
  return out;
}
// Index of the first instruction equal to `want` (-1: none).
int index_of(const Words& m, const Words& want) {
  const auto v = instructions(m);
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] == want) return int(i);
  return -1;
}
std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("spirv coopmat patch: glslang 11's literal operands become constants, markers float types", "[spirv]") {
  // %1 f16 A 16x16, %2 f32 accumulator 16x8, both in the literal form; %3 = OpTypeInt 32 0 and %4 = 16u come
  // after them (must be moved up and reused, not duplicated).
  const Words in = module(5, {inst(kOpCapability, {1}), inst(kOpMemoryModel, {0, 1}),
                              inst(kCM, {1, kMarkerF16, 3, 16, 16, 0}), inst(kCM, {2, kMarkerF32, 3, 16, 8, 2}),
                              inst(kOpTypeInt, {3, 32, 0}), inst(kOpConstant, {3, 4, 16})});
  CHECK_THAT(check_cooperative_matrix(in), Catch::Contains("component"));
  const Words out = patch_cooperative_matrix(in);
  CHECK(check_cooperative_matrix(out) == "");
  // New ids: f16, 3u, 0u (A); f32, 8u, 2u (accumulator).
  CHECK(out[3] == 11);
  const int a = index_of(out, inst(kCM, {1, 5, 6, 4, 4, 7})), c = index_of(out, inst(kCM, {2, 8, 6, 4, 9, 10}));
  REQUIRE(a >= 0);
  REQUIRE(c > a);
  CHECK(index_of(out, inst(kOpTypeInt, {3, 32, 0})) < index_of(out, inst(kOpConstant, {3, 4, 16})));
  CHECK(index_of(out, inst(kOpConstant, {3, 4, 16})) < a);
  CHECK(index_of(out, inst(kOpTypeFloat, {5, 16})) < a);
  CHECK(index_of(out, inst(kOpTypeFloat, {8, 32})) < c);
  CHECK(index_of(out, inst(kOpConstant, {3, 10, 2})) < c);
  // Capabilities (Float16, CooperativeMatrixKHR) and the extension, before the memory model.
  const int mm = index_of(out, inst(kOpMemoryModel, {0, 1}));
  CHECK(index_of(out, inst(kOpCapability, {9})) < mm);
  CHECK(index_of(out, inst(kOpCapability, {kCapabilityCooperativeMatrixKHR})) < mm);
  const int ext = index_of(out, inst(kOpExtension, {0x5f565053, 0x5f52484b, 0x706f6f63, 0x74617265, 0x5f657669,
                                                    0x7274616d, 0x7869}));  // "SPV_KHR_cooperative_matrix"
  CHECK(ext > index_of(out, inst(kOpCapability, {kCapabilityCooperativeMatrixKHR})));
  CHECK(ext < mm);
  // Patching a patched module changes nothing.
  CHECK(patch_cooperative_matrix(out) == out);
}

TEST_CASE("spirv coopmat patch: the id form (a marker constant) and bad modules", "[spirv]") {
  // %1 uint, %2 = 0x7F16u, %3 = 3u, %4 = 16u, %5 = 1u, %6 the B type with the marker constant as component.
  const Words in = module(7, {inst(kOpCapability, {1}), inst(kOpMemoryModel, {0, 1}), inst(kOpTypeInt, {1, 32, 0}),
                              inst(kOpConstant, {1, 2, kMarkerF16}), inst(kOpConstant, {1, 3, 3}),
                              inst(kOpConstant, {1, 4, 16}), inst(kOpConstant, {1, 5, 1}), inst(kCM, {6, 2, 3, 4, 4, 5})});
  const Words out = patch_cooperative_matrix(in);
  CHECK(check_cooperative_matrix(out) == "");
  CHECK(out[3] == 8);
  CHECK(index_of(out, inst(kOpTypeFloat, {7, 16})) >= 0);
  CHECK(index_of(out, inst(kOpTypeFloat, {7, 16})) < index_of(out, inst(kCM, {6, 7, 3, 4, 4, 5})));

  // A component that is none of marker, marker constant, float type.
  CHECK_THAT(message_of([] { patch_cooperative_matrix(module(3, {inst(kOpTypeInt, {1, 32, 0}), inst(kCM, {2, 1, 3, 16, 16, 0})})); }),
             Catch::Contains("neither a marker"));
  // A word count running past the end, and no magic number.
  Words cut = module(3, {inst(kOpCapability, {1})});
  cut.back() = 9;
  cut[5] = (5u << 16) | kOpCapability;
  CHECK_THAT(message_of([&] { patch_cooperative_matrix(cut); }), Catch::Contains("malformed"));
  CHECK_THAT(message_of([] { patch_cooperative_matrix(Words{1, 2, 3, 4, 5}); }), Catch::Contains("magic"));
  // The checker: a subgroup scope is required, and the capability.
  Words workgroup = patch_cooperative_matrix(module(2, {inst(kCM, {1, kMarkerF32, 2, 16, 16, 2})}));
  CHECK_THAT(check_cooperative_matrix(workgroup), Catch::Contains("scope 2"));
  // A module without cooperative matrices passes through unchanged.
  const Words plain = module(2, {inst(kOpCapability, {1}), inst(kOpTypeInt, {1, 32, 0})});
  CHECK(patch_cooperative_matrix(plain) == plain);
}

TEST_CASE("spirv coopmat: the embedded cooperative-matrix shaders are patched", "[spirv]") {
  for (const auto& name : hl::vk::embedded_shader_names()) {
    if (name.size() < 3 || name.compare(name.size() - 3, 3, "_cm") != 0) continue;
    INFO(name);
    const auto words = hl::vk::embedded_spirv(name);
    const Words w(words.begin(), words.end());
    CHECK(check_cooperative_matrix(w) == "");
    CHECK(patch_cooperative_matrix(w) == w);  // nothing left to patch
    const char* val = std::getenv("HYBRIDLAB_SPIRV_VAL");
    if (!val || !*val) {
      WARN("HYBRIDLAB_SPIRV_VAL unset: " << name << " not run through a spirv-val that knows cooperative matrices");
      continue;
    }
    const std::string path = "spirv_coopmat_" + name + ".spv";
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(w.data()), std::streamsize(w.size() * 4));
    const std::string cmd = std::string(val) + " --target-env vulkan1.3 " + path;
    CHECK(std::system(cmd.c_str()) == 0);
    std::remove(path.c_str());
  }
}
