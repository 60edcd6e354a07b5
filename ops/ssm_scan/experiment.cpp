// ssm_scan: the gated delta rule at the model's head shape: 16 key / 32 value heads, 128 x 128 state,
// with a carried-in state, T = 1 (decode) to 4096. Bytes: q, k, v, beta, g read, o written, the state
// (2 MiB) read and written once. Flops: ~7 d_k d_v per value head and token for the recurrence
// (decay, recall S^T k, rank-1 update, S^T q). Chunk sizes are swept for variants that have one
// (tunables ssm_scan.chunked.chunk and ssm_scan.chunked_coopmat.chunk; the coopmat build runs where the
// device has cooperative matrices, checked against its own precision_tolerance). QUICK: 2 key / 4 value
// heads, T <= 64.
#include "experiments/harness.h"

namespace hl::exp {

namespace {

Mat<float> unit_heads(Mat<float> m, int64_t d, float scale) {
  for (int64_t r = 0; r < m.rows(); ++r)
    for (int64_t c = 0; c < m.cols(); c += d) m.row(r).segment(c, d) *= scale / m.row(r).segment(c, d).norm();
  return m;
}

std::vector<Part> parts(const Context& cx) {
  const int64_t nk = cx.quick ? 2 : 16, nv = 2 * nk, dk = 128, dv = 128;
  Part p{"ssm_scan"};
  for (int64_t T : cx.quick ? std::vector<int64_t>{1, 16, 64} : std::vector<int64_t>{1, 16, 64, 256, 1024, 4096}) {
    Case c;
    c.label = fmt::format("T={}", T);
    c.shape = {{"T", double(T)}, {"key_heads", double(nk)}, {"value_heads", double(nv)}, {"d_k", double(dk)}, {"d_v", double(dv)}};
    c.cost = {4.0 * double(T * (2 * nk * dk + 2 * nv * dv + 2 * nv) + 2 * nv * dk * dv), 7.0 * double(T * nv * dk * dv)};
    c.inputs = [=](std::mt19937_64& g) {
      std::uniform_real_distribution<float> beta(0.05f, 0.95f), decay(-2.0f, -0.001f);
      Mat<float> b(T, nv), gl(T, nv);
      for (int64_t i = 0; i < b.size(); ++i) b.data()[i] = beta(g), gl.data()[i] = decay(g);
      return gpu::OpArgs{{{"q", Tensor::from(unit_heads(randn(g, T, nk * dk), dk, 1 / std::sqrt(float(dk))))},
                          {"k", Tensor::from(unit_heads(randn(g, T, nk * dk), dk, 1.0f))},
                          {"v", Tensor::from(randn(g, T, nv * dv))},
                          {"beta", Tensor::from(b)},
                          {"g", Tensor::from(gl)},
                          {"state", Tensor::from(randn(g, nv, dk * dv, 0.1))}},
                         {},
                         {{"n_k_heads", double(nk)}, {"decode", T == 1 ? 1.0 : 0.0}, {"chunk", 64}}};
    };
    p.cases.push_back(c);
  }
  // The recurrence in f32 over up to 4096 steps, summed in other orders than the oracle's chunked form:
  // errors grow slowly with T; 1e-4 relative L2 on the outputs and the final state separates a right
  // kernel (measured ~1e-6) from a wrong one (O(1)).
  p.tolerance = 1e-4;
  p.sweeps = {{"ssm_scan.chunked.chunk", {16, 32, 64, 128}}, {"ssm_scan.chunked_coopmat.chunk", {16, 32, 64, 128}}};
  return {p};
}

}  // namespace

Experiment ssm_scan_experiment() {
  return {"ssm_scan", "gated delta rule, 16 key / 32 value heads, 128 x 128 state, carried state, T = 1..4096", parts, {}};
}

}  // namespace hl::exp
