// Validate mode's shadow: every non-reference op is run again by the reference on host copies of exactly the
// inputs and states the variant saw, and its outputs and states compared (the variant's outputs flow on).
#pragma once
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ops/registry.h"

namespace hl::gpu {

struct OpErrorStats {
  int64_t calls = 0;
  double max_abs = 0, max_rel_l2 = 0;  // worst over calls and outputs
  int worst_layer = -1;                // layer of the worst relative error (-1: model-level)
  std::string worst_output;
  int64_t nonfinite = 0;                    // NaN/Inf values in the variant's outputs
  int first_nonfinite_layer = -2;           // -2: none
  int64_t ids_total = 0, ids_mismatch = 0;  // integer outputs (routed expert ids)
  std::set<std::string> variants;           // the kernels that ran (Registry::resolve)
};

class Validation {
 public:
  // Runs `v` (the variant that runs, already resolved) on `a` and the reference on copies of `a`, and compares.
  // `where` (the layer kind) only names the layer in errors: a reference that cannot run on the inputs the plan's
  // variants made (a kernel's expert id out of range) is a one-line error naming the op and the layer.
  // run_variant, when given, runs v on a (the executor's, which counts its transfers).
  void run(VariantCtx& c, const std::string& op, const Variant& v, OpArgs& a, int layer, const std::string& where = "",
           const std::function<void()>& run_variant = {});
  const std::map<std::string, OpErrorStats>& stats() const { return stats_; }
  // The per-op error table, then the op that produced the first NaN/Inf and every other op's first, in order.
  std::string report() const;

 private:
  void compare(const std::string& op, const std::string& name, const Tensor& got, const Tensor& want, int64_t rows, int layer);
  std::map<std::string, OpErrorStats> stats_;
  std::vector<std::pair<std::string, int>> nonfinite_order_;  // (op, layer) of each op's first NaN/Inf, as they ran
};

}  // namespace hl::gpu
