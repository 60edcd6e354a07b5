// attention: its cases, at test, quick and full scale (inputs, shapes, the bytes and flops each must move and compute),
// which its tests and experiment run, and its golden case.
#include "ops/cases.h"
#include "ops/attention/reference.h"

namespace hl::gpu {

namespace {

// attention's cases: gated GQA softmax attention, head dim 256, 16 query / 2 KV heads (the model's
// full-attention layers). Prefill: T queries over T keys (causal, empty cache), or a chunk after cached tokens.
// Decode: one query over a cache of context - 1 keys plus its own. Bytes: q, gate, o, the new k/v, and every
// cached k/v row once; flops: 4 D per (query head, visible key) pair (QK^T and PV). Quick: 4 query / 2 KV heads.
Case attention_case(const std::string& label, int64_t T, int64_t past, int64_t nq, int64_t nkv, int64_t D) {
  Case c;
  c.label = label;
  c.group = T == 1 ? "decode" : "prefill";
  c.shape = {{"T", double(T)}, {"context", double(past + T)}, {"q_heads", double(nq)}, {"kv_heads", double(nkv)}, {"head_dim", double(D)}};
  const double pairs = double(T) * double(past) + double(T) * double(T + 1) / 2;  // visible (query, key) pairs
  c.cost = {4.0 * double(3 * T * nq * D + 2 * (past + T) * nkv * D + 2 * T * nkv * D), 4.0 * double(D * nq) * pairs};
  c.inputs = [=](std::mt19937_64& g) {
    Mat<float> kc = Mat<float>::Zero(past + T, nkv * D), vc = Mat<float>::Zero(past + T, nkv * D);
    kc.topRows(past) = randn(g, past, nkv * D, 0.5);
    vc.topRows(past) = randn(g, past, nkv * D);
    return OpArgs{{{"q", Tensor::from(randn(g, T, nq * D, 0.5))},
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

std::vector<Case> cases(Scale s) {
  std::vector<Case> v;
  if (s == Scale::Test) {
    v.push_back(attention_case("prefill T=5 after 7, 4 q / 2 kv heads of 64", 5, 7, 4, 2, 64));
    v.push_back(attention_case("prefill T=9, 2 q / 1 kv heads of 72", 9, 0, 2, 1, 72));
    v.push_back(attention_case("prefill T=33 after 31, 16 q / 2 kv heads of 256", 33, 31, 16, 2, 256));
    v.push_back(attention_case("decode ctx=40, 16 q / 2 kv heads of 256", 1, 39, 16, 2, 256));
    return v;
  }
  const bool quick = s == Scale::Quick;
  const int64_t nq = quick ? 4 : 16, nkv = 2, D = 256;
  for (int64_t T : quick ? std::vector<int64_t>{64} : std::vector<int64_t>{64, 512, 4096})
    v.push_back(attention_case(fmt::format("prefill T={}", T), T, 0, nq, nkv, D));
  // A 512-token prompt chunk arriving after 3584 cached tokens: 512 queries over 4096 keys.
  if (!quick) v.push_back(attention_case("prefill T=512 ctx=4096", 512, 3584, nq, nkv, D));
  for (int64_t ctx : quick ? std::vector<int64_t>{512} : std::vector<int64_t>{512, 4096})
    v.push_back(attention_case(fmt::format("decode ctx={}", ctx), 1, ctx - 1, nq, nkv, D));
  return v;
}
// Softmax-weighted sums over up to 4096 keys in f32 with online rescaling: ~1e-6; 1e-5 bound (variants with f16
// inputs are held to their precision_tolerance instead).
constexpr double kTolerance = 1e-5;

// Its golden case (golden/ops/): inputs drawn with the slot's seed, the oracle's outputs in f32 and f64.
std::vector<OpCase> goldens() {
  std::vector<OpCase> v;
  v.push_back({"attention", 5, "16 q / 2 kv heads of 256; 7 cached + 5 new tokens; gated",
               [](auto& g) {
                 return TensorMap{{"q", golden_case::randn(g, 5, 4096, 0.5)}, {"k", golden_case::randn(g, 5, 512, 0.5)}, {"v", golden_case::randn(g, 5, 512)},
                                  {"gate", golden_case::randn(g, 5, 4096)}, {"cache_k", golden_case::randn(g, 7, 512, 0.5)},
                                  {"cache_v", golden_case::randn(g, 7, 512)}};
               },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() {
                   ref::KvCache<S> c{golden_case::in<S>(m, "cache_k"), golden_case::in<S>(m, "cache_v")};
                   auto o = ref::attention(golden_case::in<S>(m, "q"), golden_case::in<S>(m, "k"), golden_case::in<S>(m, "v"), golden_case::in<S>(m, "gate"), c, 16, 2);
                   return TensorMap{{"o", golden_case::out(o)}};
                 };
                 return golden_case::dispatch(p, f);
               }});
  return v;
}

}  // namespace

OpDef attention_with_cases(OpDef d) {
  d.cases = cases;
  d.tolerance = kTolerance;
  d.goldens = goldens();
  return d;
}

}  // namespace hl::gpu
