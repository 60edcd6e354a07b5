// What every Vulkan ssm_scan variant shares (ops/ssm_scan/vulkan*.cpp).
#pragma once
#include "ops/vulkan_variant.h"

namespace hl::gpu {

// The dimensions of one ssm_scan call, checked against every input like the reference's.
struct ScanShape {
  int64_t T, nk, nv, dk, dv;
};
ScanShape ssm_scan_shape(OpArgs& a);

// ssm_scan_columns.comp over the call's tokens (a's ssm_scan inputs and state), tunables "<key>cols|split|stage";
// per_token: a dispatch per token. norm: write the gated RMSNorm of o over each head (gdn_output), a workgroup per
// whole head; else o.
struct ScanNorm {
  Tensor z, gain;
  float eps;
};
Tensor ssm_scan_columns(Device& d, OpArgs& a, const std::string& key, bool per_token, const ScanNorm* norm);

}  // namespace hl::gpu
