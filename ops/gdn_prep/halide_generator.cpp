// gdn_prep as one Halide pipeline: x [T, C] = q | k | v channels (n_k heads of head_dim each for q and k, then the
// value channels), the carried conv state [K-1, C], taps w [C, K], gates' b, a [T, n_v] ->
//   u = silu(causal depthwise conv over [state; x]); q = l2norm(u_q) * scale, k = l2norm(u_k) per head; v = u_v;
//   beta = sigmoid(b), g = A * softplus(a + dt_bias); and the new state (the last K-1 rows of [state; x]).
// The same algorithm as ssm_conv, slice, l2norm and ssm_gates composed, written once (their Halide pieces:
// generator_common.h). CPU: plain every stage at its use, scalar, serial; tuned the conv output stored once (8 wide,
// tokens in parallel tasks), each head's sum of squares once. GPU: the conv output and the sums of squares kernels of
// their own, then one kernel per output; plain a thread per value (blocks of 64), tuned blocks of 256 and the conv as
// channels x 4 tokens per block.
#include "ops/halide/generator_common.h"

namespace hl::halide_gen {

class GdnPrep : public Generator<GdnPrep> {
 public:
  GeneratorParam<int> vec{"vec", 8};                 // CPU: vector width over channels (1: scalar)
  GeneratorParam<int> t_per_task{"t_per_task", 16};  // CPU: tokens per parallel task (0: plain, serial, inline)
  GeneratorParam<bool> gpu{"gpu", false};
  GeneratorParam<int> gpu_threads{"gpu_threads", 64};  // GPU: threads per block of the elementwise kernels
  GeneratorParam<int> gpu_tile_t{"gpu_tile_t", 1};     // GPU: tokens per block of the conv

  Input<Buffer<float, 2>> x{"x"};          // (C, T)
  Input<Buffer<float, 2>> b{"b"};          // (n_v, T)
  Input<Buffer<float, 2>> a{"a"};          // (n_v, T)
  Input<Buffer<float, 2>> w{"w"};          // (K, C)
  Input<Buffer<float, 1>> A{"A"};          // (n_v)
  Input<Buffer<float, 1>> dt_bias{"dt_bias"};
  Input<Buffer<float, 2>> state{"state"};  // (C, K-1)
  Input<int> head_dim{"head_dim"};         // d_k; the q and k channels are n_k * d_k each (the outputs' widths)
  Input<float> scale{"scale"};
  Input<float> eps{"eps"};
  Output<Buffer<float, 2>> q{"q"};          // (n_k * d_k, T)
  Output<Buffer<float, 2>> k{"k"};
  Output<Buffer<float, 2>> v{"v"};          // (C - 2 n_k d_k, T)
  Output<Buffer<float, 2>> beta{"beta"};    // (n_v, T)
  Output<Buffer<float, 2>> g{"g"};
  Output<Buffer<float, 2>> state_out{"state_out"};  // (C, K-1)

  void generate() {
    Var c("c"), t("t"), i("i"), h("h");
    const Expr T = x.dim(1).extent(), K = w.dim(0).extent(), kd = q.dim(0).extent();
    Func window("window");  // rows [0, K-1) the carried state, then x
    window(c, i) = select(i < K - 1, state(c, clamp(i, 0, K - 2)), x(c, clamp(i - (K - 1), 0, T - 1)));
    RDom rj(0, K, "rj");
    Func acc("acc"), u("u");
    acc(c, t) = 0.0f;
    acc(c, t) += w(rj, c) * window(c, t + rj);
    u(c, t) = silu(acc(c, t));
    // Sums of squares per head: heads [0, n_k) of q, then [n_k, 2 n_k) of k.
    RDom rd(0, head_dim, "rd");
    Func ss("ss");
    ss(h, t) = 0.0f;
    ss(h, t) += u(h * head_dim + rd, t) * u(h * head_dim + rd, t);
    const Expr nk = kd / head_dim;
    q(c, t) = u(c, t) * (scale / sqrt(ss(c / head_dim, t) + eps));
    k(c, t) = u(kd + c, t) * (1.0f / sqrt(ss(nk + c / head_dim, t) + eps));
    v(c, t) = u(2 * kd + c, t);
    beta(h, t) = sigmoid(b(h, t));
    g(h, t) = A(h) * softplus(a(h, t) + dt_bias(h));
    state_out(c, i) = window(c, T + i);

    Var co("co"), ci("ci"), to("to"), ti("ti"), ct("ct"), o("o"), in("in");
    const std::vector<Func> outs{q, k, v, beta, g, state_out};
    if (gpu) {
      u.compute_root().gpu_tile(c, t, co, to, ci, ti, gpu_threads, gpu_tile_t, kGuard);
      acc.compute_at(u, ci);
      ss.compute_root().gpu_tile(h, t, co, to, ci, ti, 32, 1, kGuard);  // a thread per (head, token)
      // Its sum too (left unscheduled, Halide ran it on the host between copies of u and ss to and from the device).
      ss.update().gpu_tile(h, t, co, to, ci, ti, 32, 1, kGuard);
      for (Func f : outs) {
        Var a0 = f.args()[0], a1 = f.args()[1];
        f.fuse(a0, a1, ct).gpu_tile(ct, o, in, gpu_threads, kGuard);
      }
      return;
    }
    if (t_per_task <= 0) return;  // plain: every stage inlined where it is used
    u.compute_root().split(t, to, ti, t_per_task, kGuard).parallel(to);
    if (vec > 1) u.vectorize(c, vec, kGuard);
    acc.compute_at(u, c);
    if (vec > 1) {
      acc.vectorize(c, vec, kGuard);
      acc.update().vectorize(c, vec, kGuard);
    }
    ss.compute_root().parallel(t);
    for (Func f : outs) {
      f.parallel(f.args()[1]);
      if (vec > 1) f.vectorize(f.args()[0], vec, kGuard);
    }
  }
};

}  // namespace hl::halide_gen

HALIDE_REGISTER_GENERATOR(hl::halide_gen::GdnPrep, hl_gdn_prep)
