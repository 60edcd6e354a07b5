// attention: gated GQA softmax attention, head dim 256, 16 query / 2 KV heads (the model's full-attention
// layers). Prefill: T queries over T keys (causal, empty cache). Decode: one query over a cache of
// context - 1 keys plus its own. Bytes: q, gate, o, the new k/v, and every cached k/v row once;
// flops: 4 D per (query head, visible key) pair (QK^T and PV). QUICK: 4 query / 2 KV heads, T <= 64.
#include "experiments/harness.h"

namespace hl::exp {

namespace {

Case attention_case(const std::string& label, int64_t T, int64_t past, int64_t nq, int64_t nkv, int64_t D) {
  Case c;
  c.label = label;
  c.shape = {{"T", double(T)}, {"context", double(past + T)}, {"q_heads", double(nq)}, {"kv_heads", double(nkv)}, {"head_dim", double(D)}};
  const double pairs = double(T) * double(past) + double(T) * double(T + 1) / 2;  // visible (query, key) pairs
  c.cost = {4.0 * double(3 * T * nq * D + 2 * (past + T) * nkv * D + 2 * T * nkv * D), 4.0 * double(D * nq) * pairs};
  c.inputs = [=](std::mt19937_64& g) {
    Mat<float> kc = Mat<float>::Zero(past + T, nkv * D), vc = Mat<float>::Zero(past + T, nkv * D);
    kc.topRows(past) = randn(g, past, nkv * D, 0.5);
    vc.topRows(past) = randn(g, past, nkv * D);
    return gpu::OpArgs{{{"q", Tensor::from(randn(g, T, nq * D, 0.5))},
                        {"k", Tensor::from(randn(g, T, nkv * D, 0.5))},
                        {"v", Tensor::from(randn(g, T, nkv * D))},
                        {"gate", Tensor::from(randn(g, T, nq * D))},
                        {"k_cache", Tensor::from(kc)},
                        {"v_cache", Tensor::from(vc)}},
                       {},
                       {{"n_q_heads", double(nq)}, {"n_kv_heads", double(nkv)}, {"kv_len", double(past)}}};
  };
  return c;
}

std::vector<Part> parts(const Context& cx) {
  const int64_t nq = cx.quick ? 4 : 16, nkv = 2, D = 256;
  Part p{"attention"};
  for (int64_t T : cx.quick ? std::vector<int64_t>{64} : std::vector<int64_t>{64, 512, 4096})
    p.cases.push_back(attention_case(fmt::format("prefill T={}", T), T, 0, nq, nkv, D));
  // A 512-token prompt chunk arriving after 3584 cached tokens: 512 queries over 4096 keys.
  if (!cx.quick) p.cases.push_back(attention_case("prefill T=512 ctx=4096", 512, 3584, nq, nkv, D));
  for (int64_t ctx : cx.quick ? std::vector<int64_t>{512} : std::vector<int64_t>{512, 4096})
    p.cases.push_back(attention_case(fmt::format("decode ctx={}", ctx), 1, ctx - 1, nq, nkv, D));
  // Softmax-weighted sums over up to 4096 keys in f32 with online rescaling: ~1e-6; 1e-5 bound (variants with
  // f16 inputs, vulkan:flash_coopmat, are held to their precision_tolerance instead).
  p.tolerance = 1e-5;
  // vulkan:flash_coopmat's tiles (query rows x keys; 48 KB of shared memory takes 32 x 32 at head dim 256),
  // computing subgroups per workgroup, the workgroup count below which keys are split, and the cache rows read
  // as f32 or converted to f16 once per call, in full runs.
  if (!cx.quick)
    p.sweeps = {{"attention.flash_coopmat.rows", {16, 32}},
                {"attention.flash_coopmat.keys", {16, 32}},
                {"attention.flash_coopmat.subgroups", {4, 8}},
                {"attention.flash_coopmat.min_groups", {256, 1024}},
                {"attention.flash_coopmat.f16_cache", {0, 1}}};
  return {p};
}

}  // namespace

Experiment attention_experiment() {
  return {"attention", "gated GQA attention, head dim 256, 16 q / 2 kv heads: prefill T = 64..4096, decode at context 512, 4096",
          parts, {}};
}

}  // namespace hl::exp
