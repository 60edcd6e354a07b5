// The argmax device helper (plan/argmax.h) against the CPU scan: vocab sizes that are not a multiple of
// the workgroup or of any subgroup size, ties (the smallest column must win, wherever the tied columns fall
// among invocations and subgroups), all-equal and negative rows, NaNs, and more rows than one grid row.
#include "variant_check.h"

#include "plan/argmax.h"

using namespace hl;
using namespace hl::test;

namespace {
std::vector<int32_t> on_device(const Mat<float>& m) {
  const Tensor ids = gpu::argmax_device(device(), Tensor::from(m));
  return {ids.i32().data(), ids.i32().data() + ids.i32().size()};
}
}  // namespace

TEST_CASE("vk argmax: against the CPU scan, ties and odd vocab sizes", "[vk][ops]") {
  std::mt19937_64 g(11);
  // Slices of the first step: the default (4096 columns), and short ones, so that tied columns fall in different
  // workgroups and a row's candidates outnumber the second step's invocations.
  for (uint32_t span : {0u, 100u, 7u}) {
    std::map<std::string, uint32_t> t;
    if (span) t["argmax.span"] = span;
    const vk::ScopedTuning tune(device().ctx().profile(), t);
    INFO("span " << span);
    for (auto [rows, cols] : {std::pair{1, 1}, {3, 7}, {2, 129}, {5, 1000}, {1, 4097}, {4, 248320 / 16 + 3}}) {
      Mat<float> m = randn(g, rows, cols);
      const auto want = gpu::argmax_host(m);
      CHECK(on_device(m) == want);
      for (int32_t c : want) REQUIRE(c >= 0);
      // Ties: the row's maximum copied to columns before and after it (and to the last column); the first wins.
      for (int64_t r = 0; r < rows; ++r) {
        const float top = m.row(r).maxCoeff() + 1.0f;
        for (int64_t c : {cols - 1, cols / 2, cols / 3 + 1}) m(r, c) = top;
      }
      const auto tied = gpu::argmax_host(m);
      for (int64_t r = 0; r < rows; ++r) REQUIRE(tied[size_t(r)] == std::min<int64_t>({cols - 1, cols / 2, cols / 3 + 1}));
      CHECK(on_device(m) == tied);
    }
  }
  Mat<float> same = Mat<float>::Constant(2, 333, -3.5f);  // every column tied, all negative
  CHECK(on_device(same) == std::vector<int32_t>{0, 0});
  Mat<float> nan = randn(g, 3, 50);
  nan(0, 0) = std::nanf("");
  nan.row(1).setConstant(std::nanf(""));
  nan(1, 17) = -2.0f;
  nan.row(2).setConstant(std::nanf(""));
  CHECK(on_device(nan) == gpu::argmax_host(nan));
  {
    const vk::ScopedTuning tune(device().ctx().profile(), {{"argmax.span", 7}});  // slices of NaNs only, too
    CHECK(on_device(nan) == gpu::argmax_host(nan));
  }
  CHECK(gpu::argmax_host(nan)[1] == 17);
  CHECK(gpu::argmax_host(nan)[2] == -1);
  Mat<float> many = randn(g, 70000, 3);  // more rows than the grid's x dimension (65535)
  CHECK(on_device(many) == gpu::argmax_host(many));
  require_no_validation_messages();
}

TEST_CASE("vk argmax: argmax_rows downloads only the ids of device logits", "[vk][ops]") {
  std::mt19937_64 g(12);
  const Mat<float> m = randn(g, 2, 517);
  Tensor t = Tensor::from(m);
  t.buffer_mut(device());  // now the device copy is the only one; write the values there
  device().upload(t.buffer(device()), m.data(), size_t(m.size()) * 4);
  REQUIRE(!t.host_current());
  device().reset_stats();
  CHECK(gpu::argmax_rows(&device(), t) == gpu::argmax_host(m));
  CHECK(device().stats().download_bytes == 2 * 4);
  CHECK(!t.host_current());
  CHECK(gpu::argmax_rows(nullptr, Tensor::from(m)) == gpu::argmax_host(m));
}
