// attention's Halide variants against the reference: every one on the op's cases, and the shapes and inputs that test
// what is special about its schedules.
#include "halide_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_HALIDE_VARIANT("attention")

TEST_CASE("halide ops: attention prefill over the KV cache", "[halide][ops]") {
  std::mt19937_64 g(8);
  // (T, past, n_q, n_kv, D)
  // {16, 5, ...} and {24, 0, ...}: tuned's blocked build; T = 1: its one-token build (38 keys: a partial tile of keys;
  // D = 20: a tail past the lanes; 512 keys of 256).
  for (auto [T, past, nq, nkv, D] : {std::tuple{5, 3, 4, 2, 16}, {1, 0, 2, 1, 8}, {13, 0, 6, 2, 24}, {33, 40, 4, 2, 256},
                                        {16, 5, 4, 2, 40}, {24, 0, 2, 1, 24}, {1, 37, 4, 2, 20}, {1, 511, 4, 2, 256},
                                        {1, 6, 6, 2, 8}}) {
    const int64_t cap = past + T + 3;
    gpu::OpArgs a{{{"q", Tensor::from(randn(g, T, nq * D))},
                   {"k", Tensor::from(randn(g, T, nkv * D))},
                   {"v", Tensor::from(randn(g, T, nkv * D))},
                   {"gate", Tensor::from(randn(g, T, nq * D))},
                   {"k_cache", Tensor::from(randn(g, cap, nkv * D))},
                   {"v_cache", Tensor::from(randn(g, cap, nkv * D))}},
                  {},
                  {{"n_q_heads", double(nq)}, {"n_kv_heads", double(nkv)}, {"kv_len", double(past)}}};
    INFO("T " << T << " past " << past << " heads " << nq << "/" << nkv << " D " << D);
    check_all("attention", a, 2e-6);
  }
}
