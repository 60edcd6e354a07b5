#include "ops/embed/reference.h"

namespace hl::ref {

template <class S> Mat<S> embed(const WeightRef& table, const std::vector<int32_t>& tokens) {
  Mat<float> rows(int64_t(tokens.size()), table.cols);
  for (size_t t = 0; t < tokens.size(); ++t) {
    if (tokens[t] < 0 || tokens[t] >= table.rows)
      fail("token id {} at position {} is outside the vocabulary [0, {})", tokens[t], t, table.rows);
    table.read_rows(tokens[t], 1, rows.row(int64_t(t)).data());
  }
  return rows.cast<S>();
}

template Mat<float> embed(const WeightRef&, const std::vector<int32_t>&);
template Mat<double> embed(const WeightRef&, const std::vector<int32_t>&);

}  // namespace hl::ref
