// attention: causal grouped-query softmax attention over the KV cache, with Qwen3.6's sigmoid output
// gate (SPEC 4.5 steps 5-7). Query/key norms and RoPE happen before (rmsnorm, rope ops).
#pragma once
#include "common.h"

namespace hl::ref {

// The KV cache of one full-attention layer: post-norm, post-RoPE keys and raw values, [len, n_kv * D].
template <class S> struct KvCache {
  Mat<S> k, v;
  int64_t len() const { return k.rows(); }
};

// q [T, n_q * D] (normed, roped), k, v [T, n_kv * D] (this chunk's keys/values; k normed and roped),
// gate [T, n_q * D]. Appends k, v to `cache`; token t sits at position p = len_before + t and attends to
// positions <= p. Query head n reads KV head n / (n_q / n_kv). Scores scaled by 1/sqrt(D).
// Returns softmax(q k^T) v * sigmoid(gate), [T, n_q * D].
template <class S>
Mat<S> attention(const Mat<S>& q, const Mat<S>& k, const Mat<S>& v, const Mat<S>& gate, KvCache<S>& cache,
                 int n_q_heads, int n_kv_heads);

}  // namespace hl::ref
