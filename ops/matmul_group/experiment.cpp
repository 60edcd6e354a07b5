// The matmul_group experiment: a layer's decode projections of one input, as one dispatch (vulkan:qmatvec_direct)
// against one dispatch per weight (vulkan:per_weight, what the unfused forward pass runs), at the model's shapes
// (the Gated DeltaNet's qkv, b, a, z; the attention's q, k, v), with qmatvec_direct's tunables swept; and with the
// residual add and norm folded in front (add_rmsnorm_matmul_group: what the decode step runs); the Gated DeltaNet's output
// projection with its heads' 1 / rms folded in front (rms_scaled_matmul). Memory bound: the bytes are the weights'.
#include "experiments/harness.h"

namespace hl::exp {

namespace {

std::vector<Part> parts(const Context& cx) {
  std::vector<Part> out;
  for (Part& p : op_parts("matmul_group", cx)) {
    p.sweeps = {{"matmul_group.qmatvec_direct.rows", {1, 2, 4}}, {"matmul_group.qmatvec_direct.units", {1, 2}},
                {"matmul_group.qmatvec_direct.x_global", {0, 1}}, {"matmul_group.qmatvec_direct.wg", {64, 128, 256}}};
    out.push_back(std::move(p));
  }
  for (Part& p : op_parts("add_rmsnorm_matmul_group", cx)) {
    p.sweeps = {{"add_rmsnorm_matmul_group.qmatvec_direct.rows", {1, 2, 4}},
                {"add_rmsnorm_matmul_group.qmatvec_direct.wg", {128, 256}}};
    out.push_back(std::move(p));
  }
  // The Gated DeltaNet's output projection with its heads' 1 / rms in front (rms_scaled_matmul: what the decode step runs
  // after a gdn_decode that leaves the norm's 1 / rms out).
  for (Part& p : op_parts("rms_scaled_matmul", cx)) {
    p.sweeps = {{"rms_scaled_matmul.qmatvec_direct.rows", {1, 2, 4}}, {"rms_scaled_matmul.qmatvec_direct.wg", {128, 256}}};
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

Experiment matmul_group_experiment() {
  return {"matmul_group", "a layer's decode projections of one input (qkv, b, a, z; q, k, v): one dispatch against one per weight, and with the "
          "add and norm in front; the Gated DeltaNet's output projection with its heads' 1 / rms in front",
          parts, {}};
}

}  // namespace hl::exp
