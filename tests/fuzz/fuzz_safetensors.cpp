// Fuzz target: the safetensors header parser (SafetensorsFile::open, reference/io/safetensors.cpp). Every
// tensor of an accepted file is then read whole, so any accepted byte range must lie inside the file.
#include <vector>

#include "common.h"
#include "fuzz_util.h"
#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = hl::fuzz::write_scratch("input.safetensors", data, size);
  hl::fuzz::expect_ok_or<hl::Error>([&] {
    const hl::SafetensorsFile f = hl::SafetensorsFile::open(path);
    for (const auto& [name, v] : f.tensors()) {
      if (v.dtype == hl::DType::I64 || v.dtype == hl::DType::I32) {
        (void)v.read_i64();
      } else if (v.dtype == hl::DType::U8) {
        unsigned sum = 0;
        for (size_t i = 0; i < v.nbytes; ++i) sum += v.data[i];
        (void)sum;
      } else {
        (void)v.to_mat<float>();
      }
    }
    for (const auto& [key, value] : f.metadata()) (void)f.find(key);
  });
  return 0;
}
