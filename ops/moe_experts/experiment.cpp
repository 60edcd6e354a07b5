// moe: one MoE layer of the model: the router (softmax over 256 experts, top-8), the routed experts
// (SwiGLU, width 512, hidden 2048) and the gated shared expert, for T = 1..512 tokens. The routed
// experts' bytes count each expert some token routes to once (3 x 512 x 2048 f32 = 12 MiB each), so
// small T is weight-streaming bound; flops 6 F H per (token, slot). QUICK: 32 experts, hidden 256.
// The routed experts again with the GGUF's quantized experts (q4_K gate/up, q6_K down, read as blocks; bytes
// from the block sizes: 2 x 512 rows x 1152 + 2048 rows x 420 = 1.9 MiB per expert); QUICK: width 256 (whole
// 256-value blocks in a down row).
#include <set>

#include "experiments/harness.h"
#include "model/quant_source.h"

namespace hl::exp {

namespace {

std::vector<Part> parts(const Context& cx) {
  const int64_t E = cx.quick ? 32 : 256, k = 8, F = cx.quick ? 64 : 512, H = cx.quick ? 256 : 2048;
  const std::vector<int64_t> Ts = cx.quick ? std::vector<int64_t>{1, 8, 64} : std::vector<int64_t>{1, 8, 64, 512};
  const int64_t QF = cx.quick ? 256 : F;  // quantized experts' width: whole 256-value blocks
  Part router{"moe_router"}, experts{"moe_experts"}, shared{"shared_expert"}, qexperts{"moe_experts"};
  for (int64_t T : Ts) {
    const std::string label = fmt::format("T={}", T);
    Case r;
    r.label = label;
    r.shape = {{"T", double(T)}, {"experts", double(E)}, {"k", double(k)}};
    r.cost = {4.0 * double(T * E + 2 * T * k), 5.0 * double(T * E)};
    r.inputs = [=](std::mt19937_64& g) { return gpu::OpArgs{{{"logits", Tensor::from(randn(g, T, E, 2.0))}}, {}, {{"k", double(k)}}}; };
    router.cases.push_back(r);

    // Routes drawn once per case (the same for every input rotation), so the bytes can be counted.
    std::mt19937_64 rg(uint64_t(T) * 7919);
    IMat ids(T, k);
    Mat<float> w(T, k);
    std::set<int> used;
    for (int64_t t = 0; t < T; ++t) {
      std::vector<int> perm(static_cast<size_t>(E));
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rg);
      float sum = 0;
      for (int64_t j = 0; j < k; ++j) {
        ids(t, j) = perm[size_t(j)], used.insert(perm[size_t(j)]);
        sum += (w(t, j) = std::uniform_real_distribution<float>(0.1f, 1.0f)(rg));
      }
      w.row(t) /= sum;
    }
    Case e;
    e.label = label;
    e.shape = {{"T", double(T)}, {"experts", double(E)}, {"k", double(k)}, {"experts_used", double(used.size())}};
    e.cost = {4.0 * double(used.size()) * 3 * F * H + 4.0 * double(2 * T * H + 2 * T * k), 6.0 * double(T * k * F * H)};
    e.inputs = [=](std::mt19937_64& g) {
      return gpu::OpArgs{{{"x", Tensor::from(randn(g, T, H))}, {"expert", Tensor::from_i32(ids)}, {"weight", Tensor::from(w)}},
                         {{"gate", random_weight(g, "gate", E * F, H, 1 / std::sqrt(double(H)))},
                          {"up", random_weight(g, "up", E * F, H, 1 / std::sqrt(double(H)))},
                          {"down", random_weight(g, "down", E * H, F, 1 / std::sqrt(double(F)))}},
                         {{"n_experts", double(E)}}};
    };
    experts.cases.push_back(e);

    Case q = e;
    q.label = "q4_K " + label;
    const double qbytes = double(2 * quant::row_bytes(quant::Type::Q4_K, H) * QF + quant::row_bytes(quant::Type::Q6_K, QF) * H);
    q.shape["width"] = double(QF);
    q.cost = {double(used.size()) * qbytes + 4.0 * double(2 * T * H + 2 * T * k), 6.0 * double(T * k * QF * H)};
    q.inputs = [=](std::mt19937_64& g) {
      auto qw = [&](const char* name, int64_t rows, int64_t cols, quant::Type t) {
        return whole(random_quantized_source(name, rows, cols, t, g(), float(1 / std::sqrt(double(cols)))));
      };
      return gpu::OpArgs{{{"x", Tensor::from(randn(g, T, H))}, {"expert", Tensor::from_i32(ids)}, {"weight", Tensor::from(w)}},
                         {{"gate", qw("gate", E * QF, H, quant::Type::Q4_K)},
                          {"up", qw("up", E * QF, H, quant::Type::Q4_K)},
                          {"down", qw("down", E * H, QF, quant::Type::Q6_K)}},
                         {{"n_experts", double(E)}}};
    };
    qexperts.cases.push_back(q);

    Case s;
    s.label = label;
    s.shape = {{"T", double(T)}, {"hidden", double(H)}, {"width", double(F)}};
    s.cost = {4.0 * double(3 * F * H + H + 2 * T * H), 6.0 * double(T * F * H)};
    s.inputs = [=](std::mt19937_64& g) {
      return gpu::OpArgs{{{"x", Tensor::from(randn(g, T, H))}},
                         {{"gate", weight("sgate", randn(g, F, H, 1 / std::sqrt(double(H))))},
                          {"up", weight("sup", randn(g, F, H, 1 / std::sqrt(double(H))))},
                          {"down", weight("sdown", randn(g, H, F, 1 / std::sqrt(double(F))))},
                          {"gate_w", weight("sgw", randn(g, 1, H, 1 / std::sqrt(double(H))))}},
                         {}};
    };
    shared.cases.push_back(s);
  }
  router.tolerance = 1e-6;  // identical expert ids required; weights are a softmax of k values
  experts.tolerance = qexperts.tolerance = 1e-5;  // dot products over 2048 and 512 terms in another order
  shared.tolerance = 1e-5;
  return {router, experts, qexperts, shared};
}

}  // namespace

Experiment moe_experiment() {
  return {"moe",
          "one MoE layer: router (256 experts, top-8), routed experts (width 512, hidden 2048; f32 and q4_K/q6_K), shared "
          "expert; T = 1..512",
          parts, {}};
}

}  // namespace hl::exp
