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
  // GPU: no kernel between the conv and the outputs: each of q, k, v a kernel that convolves its own channels (a
  // thread per channel walking gpu_tile_t tokens, its window in registers, unrolled for K = taps), q and k through
  // shared memory for their heads' sums of squares; the six outputs' kernels independent of each other.
  GeneratorParam<bool> gpu_fused{"gpu_fused", false};
  GeneratorParam<int> taps{"taps", 4};

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
  Output<Buffer<float, 3>> q{"q"};          // (d_k, n_k, T): [T, n_k * d_k] as heads, so a head is a dimension
  Output<Buffer<float, 3>> k{"k"};
  Output<Buffer<float, 2>> v{"v"};          // (C - 2 n_k d_k, T)
  Output<Buffer<float, 2>> beta{"beta"};    // (n_v, T)
  Output<Buffer<float, 2>> g{"g"};
  Output<Buffer<float, 2>> state_out{"state_out"};  // (C, K-1)

  void generate() {
    Var c("c"), t("t"), i("i"), h("h");
    if (gpu && gpu_fused) {
      generate_fused();
      return;
    }
    const Expr T = x.dim(1).extent(), K = w.dim(0).extent(), kd = q.dim(0).extent() * q.dim(1).extent();
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
    Var d("d");
    q(d, h, t) = u(h * head_dim + d, t) * (scale / sqrt(ss(h, t) + eps));
    k(d, h, t) = u(kd + h * head_dim + d, t) * (1.0f / sqrt(ss(nk + h, t) + eps));
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
        Var a0 = f.args()[0], a1 = f.args()[1], dh("dh");
        if (f.dimensions() == 3) f.fuse(a0, a1, dh).fuse(dh, f.args()[2], ct);
        else f.fuse(a0, a1, ct);
        f.gpu_tile(ct, o, in, gpu_threads, kGuard);
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
    for (Func f : std::vector<Func>{q, k, v, beta, g}) {
      f.parallel(f.args().back());
      if (vec > 1) f.vectorize(f.args()[0], vec, kGuard);
    }
    // The wrapper updates the state in place: each task walks its channels' rows in order (row i reads row i + T).
    Var cb("cb"), cr("cr");
    state_out.split(c, cb, cr, 512, kGuard).reorder(cr, i, cb).parallel(cb);
    if (vec > 1) state_out.vectorize(cr, vec, kGuard);
  }

  // The gpu_fused schedule's algorithm: the same math, each output's conv a Func of its own so that it can be computed
  // inside that output's blocks.
  void generate_fused() {
    Var c("c"), d("d"), h("h"), t("t"), i("i"), co("co"), ci("ci"), to("to"), ti("ti"), ct("ct"), o("o"), in("in");
    const Expr T = x.dim(1).extent(), K = w.dim(0).extent(), hd = q.dim(0).extent(), kd = hd * q.dim(1).extent();
    const auto window_at = [&](const Expr& ch, const Expr& row) {
      return select(row < K - 1, state(ch, clamp(row, 0, K - 2)), x(ch, clamp(row - (K - 1), 0, T - 1)));
    };
    RDom rj(0, K, "rj");
    // q's and k's conv per (dim, head, token) from channel `first`; v's per (channel, token).
    const auto conv3 = [&](const std::string& n, const Expr& first, Func& window, Func& acc, Func& u) {
      window = Func("window_" + n), acc = Func("acc_" + n), u = Func("u_" + n);
      window(d, h, i) = window_at(first + h * hd + d, i);
      acc(d, h, t) = 0.0f;
      acc(d, h, t) += w(rj, first + h * hd + d) * window(d, h, t + rj);
      u(d, h, t) = silu(acc(d, h, t));
    };
    Func wq, aq, uq, wk, ak, uk;
    conv3("q", 0, wq, aq, uq);
    conv3("k", kd, wk, ak, uk);
    Func wv("window_v"), av("acc_v");
    wv(c, i) = window_at(2 * kd + c, i);
    av(c, t) = 0.0f;
    av(c, t) += w(rj, 2 * kd + c) * wv(c, t + rj);
    RDom rd(0, hd, "rd");
    Func ssq("ssq"), ssk("ssk");
    ssq(h, t) = 0.0f;
    ssq(h, t) += uq(rd, h, t) * uq(rd, h, t);
    ssk(h, t) = 0.0f;
    ssk(h, t) += uk(rd, h, t) * uk(rd, h, t);
    q(d, h, t) = uq(d, h, t) * (scale / sqrt(ssq(h, t) + eps));
    k(d, h, t) = uk(d, h, t) * (1.0f / sqrt(ssk(h, t) + eps));
    v(c, t) = silu(av(c, t));
    beta(h, t) = sigmoid(b(h, t));
    g(h, t) = A(h) * softplus(a(h, t) + dt_bias(h));
    state_out(c, i) = window_at(c, T + i);

    const std::string refuse = "gdn_prep: this Halide build's unrolled window takes " + std::to_string(int(taps)) + " taps";
    // v: a thread per channel walks the block's gpu_tile_t tokens, unrolled, its window in registers.
    v.split(c, co, ci, gpu_threads, kGuard).split(t, to, ti, gpu_tile_t, kGuard).reorder(ti, ci, co, to);
    v.gpu_blocks(co, to).gpu_threads(ci).unroll(ti);
    v.specialize(K == taps);
    v.specialize_fail(refuse);
    av.compute_at(v, ti);
    wv.compute_at(v, ci).store_in(MemoryType::Register).unroll(i);
    // q and k: a block of gpu_threads threads per (head, gpu_tile_t tokens), each thread walking dims a block's width
    // apart: the head's u in shared memory (each thread its dims' tokens, window in registers), the tokens' sums of
    // squares from it. A constant block size: the head dim is the call's.
    Var dt("dt"), dd("dd");
    for (auto [out, window, acc, u, ss] : {std::tuple{Func(q), wq, aq, uq, ssq}, {Func(k), wk, ak, uk, ssk}}) {
      out.split(t, to, ti, gpu_tile_t, kGuard).split(d, dd, dt, gpu_threads, kGuard).reorder(ti, dd, dt, h, to);
      out.gpu_blocks(h, to).gpu_threads(dt).unroll(ti);
      out.specialize(K == taps);
      out.specialize_fail(refuse);
      u.compute_at(out, h).split(d, dd, dt, gpu_threads, kGuard).reorder(t, dd, dt, h).gpu_threads(dt).unroll(t);
      acc.compute_at(u, t);
      window.compute_at(u, dd).store_in(MemoryType::Register).unroll(i);
      ss.compute_at(out, h).gpu_threads(t);
      ss.update().gpu_threads(t);
    }
    for (Func f : std::vector<Func>{beta, g, state_out}) {
      Var a0 = f.args()[0], a1 = f.args()[1];
      f.fuse(a0, a1, ct).gpu_tile(ct, o, in, gpu_threads, kGuard);
    }
    Func(g).compute_with(Func(beta), o);  // the two gates of a (head, token) in one kernel
  }
};

}  // namespace hl::halide_gen

HALIDE_REGISTER_GENERATOR(hl::halide_gen::GdnPrep, hl_gdn_prep)
