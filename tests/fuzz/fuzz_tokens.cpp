// Fuzz target: the token-file reader (read_token_file, reference/model/runner.cpp).
#include "common.h"
#include "fuzz_util.h"
#include "model/runner.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = hl::fuzz::write_scratch("tokens.txt", data, size);
  hl::fuzz::expect_ok_or<hl::Error>([&] {
    const std::vector<int32_t> ids = hl::read_token_file(path);
    if (ids.empty()) hl::fuzz::finding("accepted a token file without tokens", "");
    for (int32_t id : ids)
      if (id < 0) hl::fuzz::finding("accepted a negative token id", std::to_string(id));
  });
  return 0;
}
