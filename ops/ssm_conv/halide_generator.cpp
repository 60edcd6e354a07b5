// ssm_conv as a Halide pipeline: x [T, C], w [C, K], state [K-1, C] (the last K-1 inputs of the previous
// call) -> y = silu(causal depthwise conv over [state; x]) [T, C], and the new state (the last K-1 rows
// of [state; x]). Tap 0 multiplies the oldest input.
// CPU schedules: vectorise over channels, tokens split into parallel tasks, the taps transposed once
// (wt(c, j): contiguous over channels). GPU: gpu_plain one thread per (channel, token); gpu_tuned a 2-D
// tile of channels x tokens per block, the block's taps staged in shared memory.
#include "ops/halide/generator_common.h"

namespace hl::halide_gen {

class SsmConv : public Generator<SsmConv> {
 public:
  GeneratorParam<int> vec{"vec", 8};               // CPU: vector width over channels (1: scalar)
  GeneratorParam<int> t_per_task{"t_per_task", 16};  // CPU: tokens per parallel task (0: serial)
  GeneratorParam<bool> transpose_w{"transpose_w", true};  // compute_root the transposed taps
  GeneratorParam<bool> gpu{"gpu", false};
  GeneratorParam<int> gpu_tile_c{"gpu_tile_c", 64};  // GPU: channels per block
  GeneratorParam<int> gpu_tile_t{"gpu_tile_t", 1};   // GPU: tokens per block
  GeneratorParam<bool> gpu_shared_w{"gpu_shared_w", false};  // GPU: stage the block's taps in shared memory

  Input<Buffer<float, 2>> x{"x"};          // (C, T)
  Input<Buffer<float, 2>> w{"w"};          // (K, C)
  Input<Buffer<float, 2>> state{"state"};  // (C, K-1)
  Output<Buffer<float, 2>> y{"y"};          // (C, T)
  Output<Buffer<float, 2>> state_out{"state_out"};  // (C, K-1)

  void generate() {
    Var c("c"), t("t"), j("j"), i("i");
    const Expr T = x.dim(1).extent(), K = w.dim(0).extent();
    Func window("window");  // rows [0, K-1) the carried state, then x
    window(c, i) = select(i < K - 1, state(c, clamp(i, 0, K - 2)), x(c, clamp(i - (K - 1), 0, T - 1)));
    Func wt("wt");
    wt(c, j) = w(j, c);
    RDom rj(0, K, "rj");
    Func acc("acc");
    acc(c, t) = 0.0f;
    acc(c, t) += wt(c, rj) * window(c, t + rj);
    y(c, t) = silu(acc(c, t));
    state_out(c, i) = window(c, T + i);

    Var co("co"), ci("ci"), to("to"), ti("ti");
    if (!gpu) {
      if (t_per_task > 0) y.split(t, to, ti, t_per_task, kGuard).parallel(to);
      if (vec > 1) {
        y.vectorize(c, vec, kGuard);
        state_out.vectorize(c, vec, kGuard);
      }
      acc.compute_at(y, c);  // c: one vector of channels here
      if (vec > 1) {
        acc.vectorize(c, vec, kGuard);
        acc.update().vectorize(c, vec, kGuard);
      }
      if (transpose_w) wt.compute_root().vectorize(c, vec, kGuard);
      return;
    }
    y.gpu_tile(c, t, co, to, ci, ti, gpu_tile_c, gpu_tile_t, kGuard);
    state_out.gpu_tile(c, i, co, to, ci, ti, gpu_tile_c, 1, kGuard);
    acc.compute_at(y, ci);
    if (gpu_shared_w) wt.compute_at(y, co).gpu_threads(c);
  }
};

}  // namespace hl::halide_gen

HALIDE_REGISTER_GENERATOR(hl::halide_gen::SsmConv, hl_ssm_conv)
