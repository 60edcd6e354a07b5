// ssm_scan (vulkan:block_resident, vulkan:per_token) and gdn_output (vulkan:fused_decode): the delta rule's recurrent
// form, a workgroup per (value head, column block) with its state slice in registers. The body, and why, in
// ssm_scan_columns.glsl.
#version 450
#include "ssm_scan_columns.glsl"
