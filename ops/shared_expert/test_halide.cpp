// shared_expert's Halide variants against the reference: every one on the op's cases, and odd sizes (one token, widths
// that are no multiple of a vector, a tile or a block).
#include "halide_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_HALIDE_VARIANT("shared_expert")

TEST_CASE("halide ops: shared_expert, odd sizes", "[halide][ops]") {
  std::mt19937_64 g(9);
  for (auto [T, H, F] : {std::tuple{1, 64, 96}, {5, 37, 29}, {3, 128, 8}}) {
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, H))}},
                  {{"gate", weight("gate", randn(g, F, H, 1 / std::sqrt(double(H))))},
                   {"up", weight("up", randn(g, F, H, 1 / std::sqrt(double(H))))},
                   {"down", weight("down", randn(g, H, F, 1 / std::sqrt(double(F))))},
                   {"gate_w", weight("gate_w", randn(g, 1, H, 1 / std::sqrt(double(H))))}},
                  {}};
    INFO("T " << T << ", H " << H << ", F " << F);
    check_all("shared_expert", a, gpu::Registry::get().op("shared_expert").tolerance);
  }
}
