#include "model/runner.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace hl {

Mat<float> run_reference(const ModelWeights& w, const std::vector<int32_t>& tokens, const RunOptions& o) {
  if (o.precision == Precision::F64) {
    RefExecutor<double> ex(o.scan, o.allow_nonfinite);
    return run_with(ex, w, tokens, o);
  }
  RefExecutor<float> ex(o.scan, o.allow_nonfinite);
  return run_with(ex, w, tokens, o);
}

std::vector<int32_t> read_token_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) fail("cannot open token file '{}'", path);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail("token file '{}' is a directory", path);
  std::vector<int32_t> ids;
  std::string word;
  while (f >> word) {
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(word, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != word.size() || v < 0 || v > INT32_MAX)
      fail("token file '{}': '{}' (token {}) is not a non-negative integer id", path, word, ids.size());
    ids.push_back(int32_t(v));
  }
  if (ids.empty()) fail("token file '{}' holds no tokens", path);
  return ids;
}

}  // namespace hl
