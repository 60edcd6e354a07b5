// Fuzz target: the sharded-checkpoint index parser (SafetensorsSet::open_dir reading
// model.safetensors.index.json, reference/io/safetensors.cpp). The input is the index; the directory holds
// two small shards it may name (model-0000{1,2}-of-00002.safetensors).
#include "common.h"
#include "fuzz_util.h"
#include "io/safetensors.h"

namespace {

const std::string& checkpoint_dir() {
  static const std::string dir = [] {
    const std::string d = hl::fuzz::scratch_dir() + "/checkpoint";
    std::filesystem::create_directories(d);
    hl::Mat<float> a(2, 3), b(1, 4);
    a << 1, 2, 3, 4, 5, 6;
    b << -1, 0.5f, 0.25f, 8;
    hl::write_safetensors(d + "/model-00001-of-00002.safetensors", {hl::OutTensor::from_mat("a.weight", a)});
    hl::write_safetensors(d + "/model-00002-of-00002.safetensors",
                          {hl::OutTensor::from_mat("b.weight", b, hl::DType::BF16), hl::OutTensor::from_i64("ids", {3, 1})});
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& dir = checkpoint_dir();
  hl::fuzz::write_scratch("checkpoint/model.safetensors.index.json", data, size);
  hl::fuzz::expect_ok_or<hl::Error>([&] {
    const hl::SafetensorsSet s = hl::SafetensorsSet::open_dir(dir);
    for (const std::string& name : s.names())
      if (s.find(name) == nullptr) hl::fuzz::finding("listed tensor not found", name);
  });
  return 0;
}
