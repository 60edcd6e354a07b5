// attention (prefill) as a Halide pipeline: causal GQA softmax over the KV cache, times sigmoid(gate).
// q, gate [T, n_q*D]; k_cache, v_cache [L, n_kv*D] holding L = past + T valid rows (the wrapper appends
// k, v at rows [past, L) first, as the op does); query row t sees keys [0, past + t]. Query head n reads
// KV head n / (n_q / n_kv). o = softmax(q k^T / sqrt(D)) v * sigmoid(gate).
// CPU schedules: plain computes one (token, head) row of scores at a time; tuned transposes the keys once
// (scores vectorised over keys), works on tiles of tile_t tokens of one head in parallel tasks, and
// vectorises the value sum over D. With blocked, each task's products run on register tiles (scores: reg_keys
// vectors of keys x reg_tokens tokens, the reduction over d inside; the value sum: reg_d vectors of d x reg_out
// tokens, the keys inside) and every reduction over keys stops at the last key the tile's tokens see (causal_bounds),
// so a prompt's masked triangle is neither scored nor summed; the wrapper runs it where T is a multiple of tile_t.
// GPU schedules (keys read in place): gpu_plain computes each stage (scores, row max, exponentials, row sum,
// output) as its own kernel, one thread per value. gpu_tuned: the scores of gpu_tile_t tokens x
// gpu_threads keys of one head per block, the block's queries staged in shared memory and each key read
// once for its gpu_tile_t tokens; the row max and row sum split over gpu_threads threads (partials in
// shared memory); the output gpu_threads values of d x gpu_tile_t tokens per block, each value row of the
// cache read once for the block's tokens. (lavapipe: each output thread runs kv_len x gpu_tile_t
// iterations, which Mesa 22.3 cuts short past 65535.)
#include "ops/halide/generator_common.h"

namespace hl::halide_gen {

class Attention : public Generator<Attention> {
 public:
  GeneratorParam<int> vec{"vec", 8};        // vector width (keys for scores, D for the value sum; 1: scalar)
  GeneratorParam<int> tile_t{"tile_t", 8};  // tokens per task (0: plain, one row at a time, serial)
  GeneratorParam<bool> transpose_k{"transpose_k", true};  // keys as (key, d) once, so scores vectorise over keys
  // The reductions over keys bounded by the last visible key (a token's, or for the value sum its block of reg_out
  // tokens') instead of masking every key: the same values (masked keys add exact zeros).
  GeneratorParam<bool> causal_bounds{"causal_bounds", false};
  GeneratorParam<bool> blocked{"blocked", false};  // CPU: the register tiles below (needs causal_bounds, tile_t > 0)
  GeneratorParam<int> reg_keys{"reg_keys", 1};     // CPU, blocked: vectors of keys per score tile
  GeneratorParam<int> reg_tokens{"reg_tokens", 8}; // CPU, blocked: tokens per score tile
  GeneratorParam<int> reg_d{"reg_d", 2};           // CPU, blocked: vectors of d per value-sum tile
  GeneratorParam<int> reg_out{"reg_out", 4};       // CPU, blocked: tokens per value-sum tile
  // CPU: scores as dot products along d (`vec` lanes in whole blocks, then a tail) on register tiles of reg_keys keys,
  // the keys read where they are (no transposed copy); the value sum on register tiles of reg_d vectors of d. For
  // decode: one token reads the cache once, where a transposed copy costs a second pass over the keys.
  GeneratorParam<bool> dot_scores{"dot_scores", false};
  GeneratorParam<bool> gpu{"gpu", false};
  GeneratorParam<int> gpu_threads{"gpu_threads", 64};  // GPU: threads per block
  GeneratorParam<int> gpu_tile_t{"gpu_tile_t", 4};     // GPU: tokens per block (0: plain, one thread per value)

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
    kt(l, d, m) = k_cache(d, m, blocked ? clamp(l, 0, L - 1) : l);  // blocked: register tiles read past the last key
    RDom rd(0, D, "rd");
    Func sc("sc");  // scores (key, token, head)
    const Expr tq = blocked ? clamp(t, 0, q.dim(2).extent() - 1) : t;  // blocked: tiles of tokens past T
    sc(l, t, n) = 0.0f;
    const int lanes = std::max(1, int(vec));
    RDom rdm(0, lanes, 0, D / lanes, "rdm"), rdt((D / lanes) * lanes, D % lanes, "rdt");
    if (dot_scores) {  // register tiles read past the last key: clamped
      const Expr lc = clamp(l, 0, L - 1);
      sc(l, t, n) += q(rdm.y * lanes + rdm.x, n, tq) * k_cache(rdm.y * lanes + rdm.x, n / group, lc);
      sc(l, t, n) += q(rdt, n, tq) * k_cache(rdt, n / group, lc);
    } else {
      sc(l, t, n) += q(rd, n, tq) * (transpose_k ? kt(l, rd, n / group) : k_cache(rd, n / group, l));
    }
    const Expr visible = l <= past + t;
    RDom rl(0, L, "rl"), rv(0, L, "rv");
    // causal_bounds: a token's max and sum over its visible keys; the value sum over the keys its block of ob tokens
    // sees (blocked: a register tile's, so the tile keeps one loop over keys; reg_out divides tile_t).
    const int ob = blocked ? std::max(1, int(reg_out)) : 1;
    if (causal_bounds) {
      rl.where(rl <= past + t);
      rv.where(rv <= past + (t / ob) * ob + (ob - 1));
    }
    Func mx("mx"), e("e"), den("den"), num("num");
    mx(t, n) = cast<float>(Float(32).min());
    mx(t, n) = max(mx(t, n), select(rl <= past + t, sc(rl, t, n) * scale, Float(32).min()));
    e(l, t, n) = select(visible, exp(sc(l, t, n) * scale - mx(t, n)), 0.0f);
    den(t, n) = 0.0f;
    den(t, n) += e(rl, t, n);
    // blocked: the value sum of a block of ob tokens (tb) as its own dimension, so the bound of its keys is the block's
    // alone: one loop over them per register tile, not a test per token inside it.
    Var tb("tb"), tw("tw");
    Func numb("numb");
    RDom rvb(0, L, "rvb");
    if (blocked) {
      rvb.where(rvb <= past + tb * ob + (ob - 1));
      numb(d, n, tb, tw) = 0.0f;
      numb(d, n, tb, tw) += e(rvb, tb * ob + tw, n) * v_cache(clamp(d, 0, D - 1), n / group, rvb);  // tiles past D
      num(d, n, t) = numb(d, n, t / ob, t % ob);
    } else {
      num(d, n, t) = 0.0f;
      num(d, n, t) += e(rv, t, n) * v_cache(dot_scores ? clamp(d, 0, D - 1) : d, n / group, rv);  // tiles past D
    }
    o(d, n, t) = num(d, n, t) / den(t, n) * sigmoid(gate(d, n, t));

    if (gpu) {
      schedule_gpu(sc, mx, e, den, num, d, n, t, l, rd.x, rl.x, rv.x);
      return;
    }
    if (tile_t <= 0) {  // plain: one row of scores per (token, head)
      o.reorder(d, n, t);
      for (Func f : {sc, mx, den, num}) f.compute_at(o, n);
      e.compute_at(o, n);
      return;
    }
    Var to("to"), ti("ti"), task("task");
    if (dot_scores) {
      schedule_dot(sc, e, mx, den, num, d, n, t, l, rdm, rv.x);
      return;
    }
    if (blocked) {
      schedule_blocked(sc, e, mx, den, numb, kt, d, n, t, l, m, tb, tw, rd.x, rvb.x);
      return;
    }
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
      num.update().reorder(d, t, rv).vectorize(d, vec, kGuard);
    }
    if (transpose_k) schedule_transpose(kt, l, d, m);
  }

  // The keys transposed in vec x vec tiles: loads along d, stores along l (a strided gather per vector otherwise).
  void schedule_transpose(Func kt, Var l, Var d, Var m) {
    Var lo("klo"), dd("kdo"), li("kli"), di("kdi");
    kt.compute_root().parallel(m);
    if (vec > 1) kt.tile(l, d, lo, dd, li, di, vec, vec, kGuard).vectorize(li).unroll(di);
  }

  // Tasks of tile_t tokens of one head, as tuned; inside, the scores' and the value sum's accumulators on register tiles
  // (constant-size realizations, fully unrolled) with their reduction innermost, each tile's operands loaded once per
  // step of it: a vector of keys (values) and reg_tokens (reg_out) broadcast query (weight) values.
  void schedule_blocked(Func sc, Func e, Func mx, Func den, Func numb, Func kt, Var d, Var n, Var t, Var l, Var m, Var tb,
                        Var tw, RVar rd, RVar rv) {
    Var to("to"), ti("ti"), task("task"), lo("lo"), li("li"), so("so"), si("si"), dd("dd"), di("di"), po("po"), pi("pi");
    const int rk = std::max(1, int(reg_keys)), rt = std::max(1, int(reg_tokens)), rdv = std::max(1, int(reg_d));
    const int rot = std::max(1, int(reg_out));
    o.split(t, to, ti, tile_t, kGuard)
        .split(d, dd, di, vec * rdv, kGuard)
        .split(ti, po, pi, rot, kGuard)
        .reorder(di, pi, dd, po, to, n)
        .fuse(to, n, task)
        .parallel(task)
        .vectorize(di, vec, kGuard)
        .unroll(pi);
    numb.compute_at(o, dd).bound_extent(d, vec * rdv).bound_extent(tw, rot).bound_extent(tb, 1).bound_extent(n, 1)
        .store_in(MemoryType::Register).vectorize(d, vec).unroll(d).unroll(tw);
    numb.update().reorder(d, tw, rv, tb, n).vectorize(d, vec).unroll(d).unroll(tw);
    Func scw = sc.in();  // what mx and e read: the scores of the task's tokens, filled a register tile at a time
    for (Func f : {scw, e, mx, den}) f.compute_at(o, task);
    scw.split(l, lo, li, vec * rk, kGuard).split(t, so, si, rt, kGuard).reorder(li, si, lo, so).vectorize(li, vec, kGuard).unroll(si);
    sc.compute_at(scw, lo).bound_extent(l, vec * rk).bound_extent(t, rt).bound_extent(n, 1)
        .store_in(MemoryType::Register).vectorize(l, vec).unroll(l).unroll(t);
    sc.update().reorder(l, t, rd).vectorize(l, vec).unroll(l).unroll(t);
    e.vectorize(l, vec, kGuard);
    schedule_transpose(kt, l, d, m);
  }

  // Tasks of tile_t tokens of one head; scores on register tiles of reg_keys keys (the lanes along d, summed once per
  // tile), the value sum on register tiles of reg_d vectors of d.
  void schedule_dot(Func sc, Func e, Func mx, Func den, Func num, Var d, Var n, Var t, Var l, RDom rdm, RVar rv) {
    Var to("to"), ti("ti"), task("task"), lo("lo"), li("li"), dd("dd"), di("di"), u("u");
    const int rk = std::max(1, int(reg_keys)), rdv = std::max(1, int(reg_d)), tt = std::max(1, int(tile_t));
    o.split(t, to, ti, tt, kGuard).split(d, dd, di, vec * rdv, kGuard).reorder(di, ti, dd, to, n).fuse(to, n, task)
        .parallel(task).vectorize(di, vec, kGuard);
    num.compute_at(o, dd).bound_extent(d, vec * rdv).bound_extent(t, tt).bound_extent(n, 1)
        .store_in(MemoryType::Register).vectorize(d, vec).unroll(d).unroll(t);
    num.update().reorder(d, t, rv).vectorize(d, vec).unroll(d).unroll(t);
    Func scw = sc.in();  // what mx and e read: the task's scores, filled a register tile at a time
    for (Func f : {scw, e, mx, den}) f.compute_at(o, task);
    scw.split(l, lo, li, rk, kGuard).reorder(li, t, lo).unroll(li);
    sc.compute_at(scw, lo).bound_extent(l, rk).bound_extent(t, 1).bound_extent(n, 1).store_in(MemoryType::Register).unroll(l);
    sc.update(1).unroll(l);
    if (vec > 1) sc.update(0).atomic().vectorize(rdm.x);
    sc.update(0).unroll(l);
    Func part = sc.update(0).rfactor(rdm.x, u);
    part.compute_at(scw, lo).bound_extent(l, rk).bound_extent(t, 1).bound_extent(n, 1).reorder_storage(u, l, t, n)
        .store_in(MemoryType::Register).vectorize(u).unroll(l);
    part.update().reorder(u, l, rdm.y).vectorize(u).unroll(l);
    e.vectorize(l, vec, kGuard);
  }

  void schedule_gpu(Func sc, Func mx, Func e, Func den, Func num, Var d, Var n, Var t, Var l, RVar rd, RVar rl,
                    RVar rv) {
    Var lo("lo"), li("li"), to("to"), ti("ti"), no("no"), ni("ni"), dd("dd"), di("di"), u("u");
    RVar ro("ro"), ri("ri");
    Func scw = sc.in(), mxw = mx.in(), denw = den.in();  // the kernels that store them; the originals accumulate
    e.compute_root().gpu_tile(l, t, n, lo, to, no, li, ti, ni, gpu_threads, 1, 1, kGuard);
    if (gpu_tile_t <= 0) {
      scw.compute_root().gpu_tile(l, t, n, lo, to, no, li, ti, ni, gpu_threads, 1, 1, kGuard);
      sc.compute_at(scw, li);
      for (auto [w, f] : {std::pair{mxw, mx}, {denw, den}}) {
        w.compute_root().gpu_tile(t, n, to, no, ti, ni, gpu_threads, 1, kGuard);
        f.compute_at(w, ti);
      }
      o.gpu_tile(d, n, t, dd, no, to, di, ni, ti, gpu_threads, 1, 1, kGuard);
      num.compute_at(o, di);
      return;
    }
    // Scores: block = gpu_threads keys x gpu_tile_t tokens of one head; a thread's tokens in a serial loop
    // inside the reduction over d (its key element loaded once for all of them); the block's queries in
    // shared memory.
    scw.compute_root()
        .split(t, to, ti, gpu_tile_t, kGuard)
        .split(l, lo, li, gpu_threads, kGuard)
        .reorder(ti, li, lo, to, n)
        .gpu_blocks(lo, to, n)
        .gpu_threads(li);
    sc.compute_at(scw, li).bound_storage(t, gpu_tile_t);  // constant size: registers, not device memory
    sc.update().reorder(t, rd, l, n);
    Func qs = q.in(sc);
    Var qo("qo"), qi("qi");
    qs.compute_at(scw, lo).split(qs.args()[0], qo, qi, gpu_threads, kGuard).gpu_threads(qi);
    // Row max and row sum: one block per (token, head), the reduction over keys split over the threads.
    for (auto [w, f] : {std::pair{mxw, mx}, {denw, den}}) {
      w.compute_root().gpu_tile(t, n, to, no, ti, ni, 1, 1, kGuard);
      f.compute_at(w, to).gpu_threads(t, n);
      Func part = f.update().split(rl, ro, ri, gpu_threads, kGuard).rfactor(ri, u);
      f.update().gpu_threads(t, n);
      part.compute_at(w, to).gpu_threads(u);
      part.update().reorder(t, n, ro, u).gpu_threads(u);
    }
    // Output: block = gpu_threads values along d x gpu_tile_t tokens of one head; the thread's tokens
    // accumulate in registers, each value element read once for them.
    o.split(t, to, ti, gpu_tile_t, kGuard)
        .split(d, dd, di, gpu_threads, kGuard)
        .reorder(ti, di, dd, n, to)
        .gpu_blocks(dd, n, to)
        .gpu_threads(di);
    num.compute_at(o, di).bound_storage(t, gpu_tile_t);
    num.update().reorder(t, d, n, rv);
  }
};

}  // namespace hl::halide_gen

HALIDE_REGISTER_GENERATOR(hl::halide_gen::Attention, hl_attention)
