// gdn_decode (vulkan:fused_decode): a Gated DeltaNet layer's decode step from its projections to the gated norm of the
// scan's output in one dispatch: ssm_scan_columns.glsl with NORM (a workgroup per value head) and SCAN_PREP (the conv,
// silu, q/k L2 norms and gates formed by each workgroup for its own head, the conv state shifted once per channel).
#version 450
#define SCAN_PREP 1
#include "../ssm_scan/ssm_scan_columns.glsl"
