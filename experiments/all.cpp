// Every experiment, one line each: the device-wide ones here (bandwidth/, forward.cpp) and each op's in its folder
// (ops/<op>/experiment.cpp defining <name>_experiment()).
#include "experiments/harness.h"

namespace hl::exp {

Experiment bandwidth_experiment();
Experiment norms_experiment();
Experiment elementwise_experiment();
Experiment matmul_experiment();
Experiment matmul_group_experiment();
Experiment ssm_conv_experiment();
Experiment ssm_scan_experiment();
Experiment attention_experiment();
Experiment moe_experiment();
Experiment forward_experiment();

const std::vector<Experiment>& experiments() {
  static const std::vector<Experiment> all{bandwidth_experiment(), norms_experiment(), elementwise_experiment(),     matmul_experiment(), matmul_group_experiment(),
                                           ssm_conv_experiment(),  ssm_scan_experiment(),  attention_experiment(),
                                           moe_experiment(),       forward_experiment()};
  return all;
}

}  // namespace hl::exp
