// The ssm_conv experiment: the GDN causal depthwise conv (8192 channels, kernel 4, carried state) and gdn_prep, the
// whole step from the projections to the scan's inputs, vulkan:fused beside vulkan:unfused (the separate ops'
// kernels in turn, as the unfused forward runs them). The unfused sequence moves more bytes than gdn_prep's cases
// count (u written and read back by the slices, q and k again by the norms) but is measured against the same bytes.
#include "experiments/harness.h"

namespace hl::exp {

Experiment ssm_conv_experiment() {
  return {"ssm_conv",
          "GDN causal depthwise conv, 8192 channels, kernel 4, carried state, T = 1..4096; and gdn_prep (conv, silu, "
          "split, L2 norms, gates) fused vs the separate ops",
          [](const Context& cx) {
            std::vector<Part> parts = op_parts("ssm_conv", cx);
            for (Part& p : op_parts("gdn_prep", cx)) {
              // Tokens per workgroup: longer blocks re-read fewer window rows but give fewer workgroups.
              if (!cx.quick) p.sweeps = {{"gdn_prep.fused.tokens", {4, 8, 16, 32}}};
              parts.push_back(std::move(p));
            }
            return parts;
          },
          {}};
}

}  // namespace hl::exp
