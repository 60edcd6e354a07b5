// ssm_scan: the gated delta rule, the recurrence at the heart of Gated DeltaNet (SPEC 4.4 step 8, 5).
// Two mathematically identical forms: recurrent (token by token, the decode path) and chunked (the
// chunk-parallel WY form used for prefill). They agree to rounding; tests hold them to it.
#pragma once
#include "common.h"

namespace hl::ref {

// Which key head a value head reads: HF checkpoints group value heads by key head (h / (n_v / n_k));
// llama.cpp's GGUF converter reorders them so that they tile (h % n_k).
enum class HeadOrder { Grouped, Tiled };

// Shapes: q, k [T, n_k * d_k] (L2-normalised; q already scaled by 1/sqrt(d_k)); v [T, n_v * d_v];
// beta, g [T, n_v]; state [n_v, d_k * d_v]: per value head h a row-major d_k x d_v matrix S[i][j]
// (i key index, j value index: HF's recurrent_states layout), updated in place.
// Value head h reads key head h / (n_v / n_k) (HF order) or h % n_k (Tiled). Returns o [T, n_v * d_v], o_t = S_t^T q_t where
// S_t = exp(g_t) (I - beta_t k_t k_t^T) S_{t-1} + beta_t k_t v_t^T.
template <class S>
Mat<S> ssm_scan_recurrent(const Mat<S>& q, const Mat<S>& k, const Mat<S>& v, const Mat<S>& beta, const Mat<S>& g,
                          Mat<S>& state, int n_k_heads, HeadOrder order = HeadOrder::Grouped);

// The same function computed chunk by chunk (chunk rows C; the last chunk may be shorter, which equals
// HF's zero padding): intra-chunk decay mask, unit-lower-triangular solve for the WY factors U and W,
// then one state pass per chunk.
template <class S>
Mat<S> ssm_scan_chunked(const Mat<S>& q, const Mat<S>& k, const Mat<S>& v, const Mat<S>& beta, const Mat<S>& g,
                        Mat<S>& state, int n_k_heads, int chunk, HeadOrder order = HeadOrder::Grouped);

}  // namespace hl::ref
