// The norms experiment: rmsnorm (hidden 2048, and the q/k norm over 16 heads of 256), gated_rmsnorm (32 value heads
// of 128) and l2norm (16 key heads of 128) at the model's widths, each op's own cases. Each element is read once
// and written once, a few flops per element: memory bound everywhere.
#include "experiments/harness.h"

namespace hl::exp {

Experiment norms_experiment() {
  return {"norms", "rmsnorm, gated_rmsnorm and l2norm at the model's widths (memory bound)",
          [](const Context& cx) {
            std::vector<Part> parts;
            for (const std::string op : {"rmsnorm", "gated_rmsnorm", "l2norm"})
              for (Part& p : op_parts(op, cx)) {
                p.sweeps[op + ".rowgroup.group"] = {8, 32, 64, 128, 256};  // invocations per group
                parts.push_back(std::move(p));
              }
            return parts;
          },
          {}};
}

}  // namespace hl::exp
