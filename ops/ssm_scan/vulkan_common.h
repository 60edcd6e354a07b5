// What every Vulkan ssm_scan variant shares (ops/ssm_scan/vulkan*.cpp).
#pragma once
#include "ops/vulkan_variant.h"

namespace hl::gpu {

// The dimensions of one ssm_scan call, checked against every input like the reference's.
struct ScanShape {
  int64_t T, nk, nv, dk, dv;
};
ScanShape ssm_scan_shape(OpArgs& a);

}  // namespace hl::gpu
