// The ssm_scan experiment: the gated delta rule at the model's head shape (ops/ssm_scan/cases.cpp), T = 1..4096,
// with the chunk size swept for the variants that have one (the coopmat build runs where the device has
// cooperative matrices, checked against its own precision_tolerance); and the decode step with its gated norm fused
// (gdn_output) and the whole decode step (gdn_decode: conv, gates and norms formed in the same dispatch), invocations
// per column swept; gdn_decode.fused_decode.diag (HYBRIDLAB_TUNE, with --time-failing) leaves parts of its step out.
#include "experiments/harness.h"

namespace hl::exp {

Experiment ssm_scan_experiment() {
  return {"ssm_scan", "gated delta rule, 16 key / 32 value heads, 128 x 128 state, carried state, T = 1..4096; the decode step with its gated norm (gdn_output), the whole decode step (gdn_decode)",
          [](const Context& cx) {
            std::vector<Part> parts = op_parts("ssm_scan", cx);
            for (Part& p : parts)
              p.sweeps = {{"ssm_scan.chunked.chunk", {16, 32, 64, 128}}, {"ssm_scan.chunked_coopmat.chunk", {16, 32, 64, 128}},
                          {"ssm_scan.chunked_two_pass.cols", {16, 32}},
                          {"ssm_scan.chunked_two_pass.scan_subgroups", {4, 8}},
                          {"ssm_scan.chunked_two_pass.piece", {32, 64}},
                          {"ssm_scan.chunked_two_pass.prefetch", {0, 1}},
                          // value columns per workgroup, invocations per column, tokens staged at a time
                          // (cols 64, split 4 and stage 8 lost at T = 512 on the H200: README)
                          {"ssm_scan.block_resident.cols", {16, 32}}, {"ssm_scan.block_resident.split", {8, 16}},
                          {"ssm_scan.block_resident.stage", {16, 32}}, {"ssm_scan.block_resident.unroll", {0, 1}},
                          {"ssm_scan.block_resident.contig", {0, 1}},
                          {"ssm_scan.block_resident.acc", {1, 2, 4}}};
            for (const char* op : {"gdn_output", "gdn_decode"})  // gdn_decode: the whole step, with gdn_output's tunables
              for (Part& p : op_parts(op, cx)) {
                p.sweeps = {{"gdn_output.fused_decode.split", {2, 4, 8}}, {"gdn_output.fused_decode.acc", {1, 2, 4}}};
                parts.push_back(std::move(p));
              }
            return parts;
          },
          {}};
}

}  // namespace hl::exp
