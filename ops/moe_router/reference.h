// moe_router: expert selection from router logits (SPEC 4.6, 10.11): softmax over ALL experts, top-k,
// renormalised over the k chosen (Qwen3.5/3.6 always renormalises). The router projection itself is a matmul.
#pragma once
#include "common.h"

namespace hl::ref {

template <class S> struct Routes {
  IMat expert;     // [T, k] expert ids, by descending probability (ties: lower id first)
  Mat<S> weight;   // [T, k] renormalised weights, each row sums to 1
};

// logits [T, E] -> routes of k experts per token.
template <class S> Routes<S> moe_router(const Mat<S>& logits, int k);

}  // namespace hl::ref
