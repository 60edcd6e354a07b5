// The moe experiment: one MoE layer of the model, each op's own cases: the router (softmax over 256 experts,
// top-8), the routed experts (SwiGLU, width 512, hidden 2048; f32 and q4_K/q6_K experts) and the gated shared
// expert, for T = 1..512 tokens; and the whole block fused (moe_block, router to output) for decode, alone and with the
// residual add and norm folded in front of it (add_rmsnorm_moe_block: what the decode step runs).
#include "experiments/harness.h"

namespace hl::exp {

Experiment moe_experiment() {
  return {"moe",
          "one MoE layer: router (256 experts, top-8), routed experts (width 512, hidden 2048; f32 and q4_K/q6_K), shared "
          "expert; T = 1..512; the whole block (moe_block, add_rmsnorm_moe_block) for decode",
          [](const Context& cx) {
            std::vector<Part> parts;
            for (const char* op : {"moe_router", "moe_experts", "shared_expert", "moe_block", "add_rmsnorm_moe_block"})
              for (Part& p : op_parts(op, cx)) {
                // The cooperative-matrix grouped GEMM's grid of subgroups (32 x 32 blocks of gate and up each).
                if (std::string(op) == "moe_experts")
                  p.sweeps = {{"moe_experts.route_pack_coopmat.warp_rows", {1, 2}},
                              {"moe_experts.route_pack_coopmat.warp_cols", {2, 4}},
                              {"moe_experts.route_pack_coopmat.k_units", {1, 2, 4}},
                              {"moe_experts.route_pack_coopmat.prefetch", {0, 3, 7, 15}},
                              {"moe_experts.route_pack_coopmat.sub_rows", {16, 32}},
                              // The tile-per-subgroup GEMM: subgroups per workgroup, units per step, weights prefetched.
                              {"moe_experts.route_pack_warp.subgroups", {2, 4, 8}},
                              {"moe_experts.route_pack_warp.k_units", {1, 2, 4}},
                              {"moe_experts.route_pack_warp.prefetch", {0, 1}},
                              // Its scalar form: the grid of invocations (4 x 4 outputs each), units per step.
                              {"moe_experts.route_pack_qgemm.thread_rows", {4, 8}},
                              {"moe_experts.route_pack_qgemm.thread_cols", {32, 64}},
                              {"moe_experts.route_pack_qgemm.k_units", {1, 2}},
                              // On integer dot products: the grid of invocations (4 x 4 outputs each), slots per step.
                              {"moe_experts.route_pack_i8.thread_rows", {4, 8}},
                              {"moe_experts.route_pack_i8.thread_cols", {16, 32, 64}},
                              {"moe_experts.route_pack_i8.slots", {1, 2}},
                              {"moe_experts.route_pack_i8.prefetch", {0, 1}}};
                // Rows per workgroup of each step, workgroup size, the early weight loads; add_rmsnorm_moe_block (what
                // decode runs) runs moe_block's kernels, at moe_block's tunables.
                if (std::string(op) == "moe_block" || std::string(op) == "add_rmsnorm_moe_block")
                  p.sweeps = {{"moe_block.fused_decode.x_rows", {2, 4, 8, 16}},
                              {"moe_block.fused_decode.gate_up_rows", {4, 8, 16, 32}},
                              {"moe_block.fused_decode.down_rows", {2, 4, 8, 16}},
                              {"moe_block.fused_decode.wg", {128, 256, 512}},
                              {"moe_block.fused_decode.early_down", {0, 1}},
                              {"moe_block.fused_decode.early_x", {0, 1}}};
                parts.push_back(std::move(p));
              }
            return parts;
          },
          {}};
}

}  // namespace hl::exp
