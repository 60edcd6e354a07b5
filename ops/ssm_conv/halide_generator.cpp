// ssm_conv as a Halide pipeline: x [T, C], w [C, K], state [K-1, C] (the last K-1 inputs of the previous
// call) -> y = silu(causal depthwise conv over [state; x]) [T, C], and the new state (the last K-1 rows
// of [state; x]). Tap 0 multiplies the oldest input.
// CPU schedules: vectorise over channels, tokens split into parallel tasks, the taps transposed once
// (wt(c, j): contiguous over channels); or (c_per_task) channel blocks as tasks, each vector's taps in registers. GPU: gpu_plain one thread per (channel, token), a block a tile of channels x
// tokens (gpu_shared_w: the block's taps staged in shared memory); gpu_window_regs: a thread per channel walks
// gpu_tile_t tokens, its taps and its window of gpu_tile_t + K - 1 inputs loaded once into registers (the loops
// unrolled, so the compiler holds them), as the hand-written kernel's sliding window.
#include "ops/halide/generator_common.h"

namespace hl::halide_gen {

class SsmConv : public Generator<SsmConv> {
 public:
  GeneratorParam<int> vec{"vec", 8};               // CPU: vector width over channels (1: scalar)
  GeneratorParam<int> t_per_task{"t_per_task", 16};  // CPU: tokens per parallel task (0: serial)
  GeneratorParam<bool> transpose_w{"transpose_w", true};  // compute_root the transposed taps
  GeneratorParam<int> c_per_task{"c_per_task", 0};  // CPU: channels per parallel task, each vector of them walking every
                                                    // token with its taps loaded once (0: tasks over tokens)
  GeneratorParam<bool> gpu{"gpu", false};
  GeneratorParam<int> gpu_tile_c{"gpu_tile_c", 64};  // GPU: channels per block
  GeneratorParam<int> gpu_tile_t{"gpu_tile_t", 1};   // GPU: tokens per block
  GeneratorParam<bool> gpu_shared_w{"gpu_shared_w", false};  // GPU: stage the block's taps in shared memory
  GeneratorParam<bool> gpu_window_regs{"gpu_window_regs", false};  // GPU: a thread per channel, window in registers
  GeneratorParam<int> taps{"taps", 4};  // GPU, gpu_window_regs: the K the unrolled loops assume (others still run)

  Input<Buffer<float, 2>> x{"x"};          // (C, T)
  Input<Buffer<float, 2>> w{"w"};          // (K, C)
  Input<Buffer<float, 2>> state{"state"};  // (C, K-1)
  Output<Buffer<float, 2>> y{"y"};          // (C, T)
  Output<Buffer<float, 2>> state_out{"state_out"};  // (C, K-1)

  void generate() {
    Var c("c"), t("t"), j("j"), i("i");
    const Expr T = x.dim(1).extent(), K = w.dim(0).extent();
    Func window("window");  // rows [0, K-1) the carried state, then x
    const auto window_at = [&](const Expr& ch, const Expr& row) {
      return select(row < K - 1, state(ch, clamp(row, 0, K - 2)), x(ch, clamp(row - (K - 1), 0, T - 1)));
    };
    window(c, i) = window_at(c, i);
    Func wt("wt");
    wt(c, j) = w(j, c);
    RDom rj(0, K, "rj");
    Func acc("acc");
    acc(c, t) = 0.0f;
    acc(c, t) += wt(c, rj) * window(c, t + rj);
    y(c, t) = silu(acc(c, t));
    state_out(c, i) = window_at(c, T + i);  // not through window: y's schedules may keep window per thread

    Var co("co"), ci("ci"), to("to"), ti("ti");
    if (!gpu && c_per_task > 0) {
      // A task per block of channels (so one token still splits over the cores); each vector of channels loads its
      // taps once (no transposed copy of w per call) and walks the tokens, built for K = taps (other K run the same
      // loops with the taps' buffer sized at run time).
      Var cb("cb"), cr("cr"), cv("cv"), cl("cl");
      y.split(c, cb, cr, c_per_task, kGuard).split(cr, cv, cl, vec, kGuard).reorder(cl, t, cv, cb);
      y.vectorize(cl).parallel(cb);
      y.specialize(K == taps && w.dim(1).stride() == taps);  // the taps of a vector: dense loads and shuffles
      acc.compute_at(y, t).vectorize(c);
      acc.update().vectorize(c);
      wt.compute_at(y, cv).vectorize(c);
      state_out.split(c, cb, cr, c_per_task, kGuard).parallel(cb).vectorize(cr, vec, kGuard);
      return;
    }
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
    state_out.gpu_tile(c, i, co, to, ci, ti, gpu_tile_c, 1, kGuard);
    if (gpu_window_regs) {
      // The unrolled loops need constant extents: built for K = taps (the model's 4); another K is a clear error.
      y.split(c, co, ci, gpu_tile_c, kGuard).split(t, to, ti, gpu_tile_t, kGuard).reorder(ti, ci, co, to);
      y.gpu_blocks(co, to).gpu_threads(ci).unroll(ti);
      y.specialize(K == taps);
      y.specialize_fail("ssm_conv: this Halide build's unrolled window takes " + std::to_string(int(taps)) + " taps");
      acc.compute_at(y, ti);  // inside the unrolled token loop: constant offsets into the window
      acc.update().unroll(rj);
      window.compute_at(y, ci).store_in(MemoryType::Register).unroll(i);
      wt.compute_at(y, ci).store_in(MemoryType::Register).unroll(j);
      return;
    }
    y.gpu_tile(c, t, co, to, ci, ti, gpu_tile_c, gpu_tile_t, kGuard);
    acc.compute_at(y, ci);
    if (gpu_shared_w) wt.compute_at(y, co).gpu_threads(c);
  }
};

}  // namespace hl::halide_gen

HALIDE_REGISTER_GENERATOR(hl::halide_gen::SsmConv, hl_ssm_conv)
