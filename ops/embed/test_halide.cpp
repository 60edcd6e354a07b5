// embed's Halide variants against the reference: every one on the op's cases, odd widths, repeated and edge ids; an id
// outside the vocabulary is a one-line error.
#include "halide_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_HALIDE_VARIANT("embed")

TEST_CASE("halide ops: embed, odd widths and edge ids", "[halide][ops]") {
  std::mt19937_64 g(13);
  const WeightRef table = weight("table", randn(g, 37, 29));
  IMat ids(1, 6);
  ids << 0, 36, 5, 5, 36, 0;
  gpu::OpArgs a{{{"tokens", Tensor::from_i32(ids)}}, {{"table", table}}, {}};
  check_all("embed", a, 0);  // copies: exact
  ids(0, 2) = 37;
  gpu::OpArgs bad{{{"tokens", Tensor::from_i32(ids)}}, {{"table", table}}, {}};
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  for (const auto& v : halide_variants("embed"))
    CHECK_THROWS_WITH(gpu::Registry::get().variant("embed", v).run(ctx, bad), Catch::Contains("outside the vocabulary"));
}
