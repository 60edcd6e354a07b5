// The attention experiment: gated GQA attention, head dim 256, 16 query / 2 KV heads (ops/attention/cases.cpp):
// prefill over empty and filled caches, decode at two contexts.
#include "experiments/harness.h"

namespace hl::exp {

Experiment attention_experiment() {
  return {"attention", "gated GQA attention, head dim 256, 16 q / 2 kv heads: prefill T = 64..4096, decode at context 512, 4096; the fused prompt-chunk inputs (attention_prep) at T = 512, 4096; the fused decode step (attention_decode) at context 64..4096",
          [](const Context& cx) {
            std::vector<Part> parts = op_parts("attention", cx);
            // vulkan:flash_coopmat at its tiles (query rows x keys: 48 KB of shared memory takes 32 x 32 at head dim
            // 256; rows, keys and f16_cache were swept in 0b141f1's reports): computing subgroups per workgroup, and
            // the key splits (the longest causal tile walks every key alone unless its keys are split: splits while
            // fewer than min_groups workgroups would run, at least split_min_keys keys each; min_groups 1024 and 4096
            // measured the same), the V tile's loads with the K tile's or after S (early_v), in full runs.
            // vulkan:flash_rows: subgroups (16 query rows each), and its key splits as flash_coopmat's.
            if (!cx.quick)
              for (Part& p : parts)
                if (p.group == "prefill")
                  p.sweeps = {{"attention.flash_coopmat.subgroups", {4, 8}}, {"attention.flash_coopmat.early_v", {0, 1}},
                              {"attention.flash_coopmat.split_min_keys", {128, 256, 512}},
                              {"attention.flash_rows.subgroups", {4, 8}},
                              {"attention.flash_rows.split_min_keys", {160, 256}},
                              {"attention.flash_rows.min_groups", {256, 512}}};
            // A prompt chunk's inputs to the attention from the projections (attention_prep: the q/gate split, q/k norms
            // and ropes), fused against the parts' kernels in turn.
            for (Part& p : op_parts("attention_prep", cx)) parts.push_back(std::move(p));
            // The decode step fused from the projections on (attention_decode: q/k norms, rope, append, attention).
            for (Part& p : op_parts("attention_decode", cx)) {
              p.sweeps = {{"attention_decode.fused_decode.pv_full", {0, 1}}, {"attention_decode.fused_decode.block", {16, 32, 64}}};
              parts.push_back(std::move(p));
            }
            return parts;
          },
          {}};
}

}  // namespace hl::exp
