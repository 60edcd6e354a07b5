// Running a token sequence the way the `run` command defines it: tokens [0, K) as the prompt, fed through
// the prefill path in chunks of N; tokens [K, end) one at a time through the decode path.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "model/forward.h"
#include "ref_executor.h"

namespace hl {

struct RunOptions {
  int64_t prefill_chunk = 0;  // 0: the whole prompt in one chunk
  int64_t decode_from = -1;   // K; -1: every token is prompt
  Precision precision = Precision::F32;
  ScanOptions scan;
  // Let NaN/Inf flow through the ops and into the logits (experiments) instead of stopping at the first op that
  // makes one (the oracle) or at logits that hold one (any executor).
  bool allow_nonfinite = false;
  // Called after the embedding (0), after each layer i (i + 1) and after the final norm, e.g. for timing.
  std::function<void(int)> on_hidden;
};

// Logits of every position, [n_tokens, vocab], in order, with any executor.
template <class Ex> Mat<float> run_tokens(Forward<Ex>& fwd, const std::vector<int32_t>& tokens, const RunOptions& o) {
  const int64_t n = int64_t(tokens.size());
  const int64_t K = o.decode_from < 0 ? n : o.decode_from;
  if (K > n) fail("--decode-from {} is beyond the {} tokens", K, n);
  if (o.decode_from < -1) fail("--decode-from {}: give a token index from 0 to the number of tokens", o.decode_from);
  if (o.prefill_chunk < 0) fail("--prefill-chunk must be >= 0");
  const int64_t chunk = o.prefill_chunk == 0 ? std::max<int64_t>(K, 1) : o.prefill_chunk;
  Mat<float> logits;
  auto append = [&](const auto& step_logits, int64_t row) {
    const Mat<float> l = fwd.executor().to_host(step_logits);
    // The last line of defence for executors that do not check every op (a Vulkan plan without --validate).
    if (!o.allow_nonfinite && !l.allFinite())
      fail("non-finite values: the logits of positions {}..{} hold {} NaN/Inf of {} values (--validate names the op that "
           "made them; --allow-nonfinite writes them)", row, row + l.rows() - 1, l.size() - l.array().isFinite().count(), l.size());
    if (logits.size() == 0) logits.resize(n, l.cols());
    logits.middleRows(row, l.rows()) = l;
  };
  for (int64_t t0 = 0; t0 < K; t0 += chunk) {
    const int64_t len = std::min(chunk, K - t0);
    append(fwd.step({tokens.begin() + t0, tokens.begin() + t0 + len}, Phase::Prefill), t0);
  }
  for (int64_t t = K; t < n; ++t) append(fwd.step({tokens[size_t(t)]}, Phase::Decode), t);
  return logits;
}

// run_tokens on a fresh forward pass over `ex` (with o.on_hidden as the observer).
template <class Ex> Mat<float> run_with(Ex& ex, const ModelWeights& w, const std::vector<int32_t>& tokens, const RunOptions& o) {
  Forward<Ex> fwd(ex, w);
  if (o.on_hidden) fwd.set_observer([&](int i, const typename Ex::Tensor&) { o.on_hidden(i); });
  return run_tokens(fwd, tokens, o);
}

// The oracle: run_tokens with the reference executor in the requested precision.
Mat<float> run_reference(const ModelWeights& w, const std::vector<int32_t>& tokens, const RunOptions& o);

// Token ids separated by whitespace; an empty file or a non-integer is an error.
std::vector<int32_t> read_token_file(const std::string& path);

}  // namespace hl
