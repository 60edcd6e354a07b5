// attention (prefill) as a Halide pipeline: causal GQA softmax over the KV cache, times sigmoid(gate).
// q, gate [T, n_q*D]; k_cache, v_cache [L, n_kv*D] holding L = past + T valid rows (the wrapper appends
// k, v at rows [past, L) first, as the op does); query row t sees keys [0, past + t]. Query head n reads
// KV head n / (n_q / n_kv). o = softmax(q k^T / sqrt(D)) v * sigmoid(gate).
// CPU schedules: plain computes one (token, head) row of scores at a time; tuned transposes the keys once
// (scores vectorised over keys), works on tiles of tile_t tokens of one head in parallel tasks, and
// vectorises the value sum over D.
#include "gpu/halide/generator_common.h"

namespace hl::halide_gen {

class Attention : public Generator<Attention> {
 public:
  GeneratorParam<int> vec{"vec", 8};        // vector width (keys for scores, D for the value sum; 1: scalar)
  GeneratorParam<int> tile_t{"tile_t", 8};  // tokens per task (0: plain, one row at a time, serial)
  GeneratorParam<bool> transpose_k{"transpose_k", true};  // keys as (key, d) once, so scores vectorise over keys

  Input<Buffer<float, 3>> q{"q"};              // (D, n_q, T)
  Input<Buffer<float, 3>> k_cache{"k_cache"};  // (D, n_kv, L)
  Input<Buffer<float, 3>> v_cache{"v_cache"};  // (D, n_kv, L)
  Input<Buffer<float, 3>> gate{"gate"};        // (D, n_q, T)
  Input<int> past{"past"};
  Output<Buffer<float, 3>> o{"o"};  // (D, n_q, T)

  void generate() {
    Var d("d"), n("n"), t("t"), l("l"), m("m");
    const Expr D = q.dim(0).extent(), nq = q.dim(1).extent(), nkv = k_cache.dim(1).extent(), L = k_cache.dim(2).extent();
    const Expr group = nq / nkv;
    const Expr scale = 1.0f / sqrt(cast<float>(D));
    Func kt("kt");
    kt(l, d, m) = k_cache(d, m, l);
    RDom rd(0, D, "rd");
    Func sc("sc");  // scores (key, token, head)
    sc(l, t, n) = 0.0f;
    sc(l, t, n) += q(rd, n, t) * (transpose_k ? kt(l, rd, n / group) : k_cache(rd, n / group, l));
    const Expr visible = l <= past + t;
    RDom rl(0, L, "rl");
    Func mx("mx"), e("e"), den("den"), num("num");
    mx(t, n) = cast<float>(Float(32).min());
    mx(t, n) = max(mx(t, n), select(rl <= past + t, sc(rl, t, n) * scale, Float(32).min()));
    e(l, t, n) = select(visible, exp(sc(l, t, n) * scale - mx(t, n)), 0.0f);
    den(t, n) = 0.0f;
    den(t, n) += e(rl, t, n);
    num(d, n, t) = 0.0f;
    num(d, n, t) += e(rl, t, n) * v_cache(d, n / group, rl);
    o(d, n, t) = num(d, n, t) / den(t, n) * sigmoid(gate(d, n, t));

    if (tile_t <= 0) {  // plain: one row of scores per (token, head)
      o.reorder(d, n, t);
      for (Func f : {sc, mx, den, num}) f.compute_at(o, n);
      e.compute_at(o, n);
      return;
    }
    Var to("to"), ti("ti"), task("task");
    o.split(t, to, ti, tile_t, kGuard).reorder(d, ti, to, n).fuse(to, n, task).parallel(task);
    if (vec > 1) o.vectorize(d, vec, kGuard);
    sc.compute_at(o, task);
    e.compute_at(o, task);
    mx.compute_at(o, task);
    den.compute_at(o, task);
    num.compute_at(o, task);
    if (vec > 1) {
      sc.vectorize(l, vec, kGuard);
      sc.update().reorder(l, t, rd).vectorize(l, vec, kGuard);
      e.vectorize(l, vec, kGuard);
      num.vectorize(d, vec, kGuard);
      num.update().reorder(d, t, rl).vectorize(d, vec, kGuard);
    }
    if (transpose_k) {
      kt.compute_root().parallel(m);
      if (vec > 1) kt.vectorize(l, vec, kGuard);
    }
  }
};

}  // namespace hl::halide_gen

HALIDE_REGISTER_GENERATOR(hl::halide_gen::Attention, hl_attention)
