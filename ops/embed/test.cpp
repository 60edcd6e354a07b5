// embed: every variant against the reference on the op's cases (cases.cpp), and what is
// special about its kernels.
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

namespace {

Tensor ids(const std::vector<int32_t>& v, int64_t rows, int64_t cols) {
  IMat m(rows, cols);
  std::copy(v.begin(), v.end(), m.data());
  return Tensor::from_i32(std::move(m));
}

}  // namespace

HL_TEST_EVERY_VARIANT("embed")

TEST_CASE("vk ops: embed, tiny and real width", "[vk][ops]") {
  std::mt19937_64 g(11);
  for (auto [V, H, T] : {std::tuple{512, 128, 7}, {1000, 2048, 5}, {3, 5, 1}}) {
    std::vector<int32_t> tok(static_cast<size_t>(T));
    std::uniform_int_distribution<int32_t> d(0, V - 1);
    for (auto& t : tok) t = d(g);
    tok.front() = 0;
    tok.back() = V - 1;  // both ends of the table
    gpu::OpArgs a{{{"tokens", ids(tok, 1, T)}}, {{"table", weight("table", randn(g, V, H))}}, {}};
    for (auto& v : vulkan_variants("embed")) require_close("embed", v, a, 0.0);
  }
}
