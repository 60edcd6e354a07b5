// The attention experiment: gated GQA attention, head dim 256, 16 query / 2 KV heads (ops/attention/cases.cpp):
// prefill over empty and filled caches, decode at two contexts.
#include "experiments/harness.h"

namespace hl::exp {

Experiment attention_experiment() {
  return {"attention", "gated GQA attention, head dim 256, 16 q / 2 kv heads: prefill T = 64..4096, decode at context 512, 4096",
          [](const Context& cx) {
            std::vector<Part> parts = op_parts("attention", cx);
            // vulkan:flash_coopmat's tiles (query rows x keys; 48 KB of shared memory takes 32 x 32 at head dim 256),
            // computing subgroups per workgroup, the workgroup count below which keys are split, and the cache rows
            // read as f32 or converted to f16 once per call, in full runs.
            if (!cx.quick)
              for (Part& p : parts)
                if (p.group == "prefill")
                  p.sweeps = {{"attention.flash_coopmat.rows", {16, 32}},
                              {"attention.flash_coopmat.keys", {16, 32}},
                              {"attention.flash_coopmat.subgroups", {4, 8}},
                              {"attention.flash_coopmat.min_groups", {256, 1024}},
                              {"attention.flash_coopmat.f16_cache", {0, 1}}};
            return parts;
          },
          {}};
}

}  // namespace hl::exp
