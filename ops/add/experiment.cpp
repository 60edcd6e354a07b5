// The elementwise experiment: the residual add, add_rmsnorm, slice, rope, ssm_gates and embed at the model's widths,
// each op's own cases. A few flops per element, each read and written once: memory bound everywhere, and at decode
// sizes bound by a dispatch's latency.
#include "experiments/harness.h"

namespace hl::exp {

Experiment elementwise_experiment() {
  return {"elementwise", "add, add_rmsnorm, slice, rope, ssm_gates and embed at the model's widths (memory bound)",
          [](const Context& cx) {
            std::vector<Part> parts;
            for (const char* op : {"add", "add_rmsnorm", "slice", "rope", "ssm_gates", "embed"})
              for (Part& p : op_parts(op, cx)) parts.push_back(std::move(p));
            return parts;
          },
          {}};
}

}  // namespace hl::exp
