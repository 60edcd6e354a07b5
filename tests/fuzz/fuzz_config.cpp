// Fuzz target: the config.json reader (ModelConfig::from_file, reference/model/config.cpp). An accepted
// config must give sizes the rest of the program can use: its derived widths are computed as the forward
// pass computes them.
#include "common.h"
#include "fuzz_util.h"
#include "model/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = hl::fuzz::write_scratch("config.json", data, size);
  hl::fuzz::expect_ok_or<hl::Error>([&] {
    const hl::ModelConfig c = hl::ModelConfig::from_file(path);
    (void)c.summary();
    (void)(c.key_dim() + c.value_dim() + c.conv_dim());
    for (int i = 0; i < c.n_layers; ++i) (void)c.is_full(i);
  });
  return 0;
}
