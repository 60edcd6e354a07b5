// ssm_scan (the gated delta rule) as a Halide pipeline in the chunked form (SPEC 5; the oracle's
// ssm_scan_chunked): per chunk of C tokens and value head h,
//   gam  = inclusive cumsum of g,  Gam[r][s] = exp(gam_r - gam_s) (s <= r),
//   N    = strictly-lower((beta K) K^T * Gam)  (unit lower triangular I + N),
//   [U | W] = (I + N)^-1 [beta V | beta exp(gam) K]       (the triangular solve),
//   P    = (Q K^T) * Gam,
// and, with the state S carried from chunk to chunk (d_k x d_v; S[i][j], i key, j value index),
//   Vn = U - W S,   o = exp(gam) Q S + P Vn,   S' = exp(gam_last) S + (kdec K)^T Vn.
// The state pass (Vn and S', chunk after chunk) is the only sequential part; everything else is
// chunk-parallel.
// The last chunk is padded with zero rows (q, k, v, beta, g = 0), which changes nothing (HF's padding).
// Value head h reads key head h / (n_v / n_k) (HF grouped order) or h % n_k (tiled, GGUF).
// chunk C is a GeneratorParam (the math does not depend on it). CPU schedules: plain computes every
// stage whole (breadth first), serial, scalar; tuned runs the chunk-parallel stages over (chunk, head)
// tasks with their per-chunk intermediates kept at the task, vectorises along the value index, and runs
// the state pass in parallel over heads. The wrapper may pick a shorter-chunk build for short T.
// GPU schedules (gpu_plain, gpu_tuned): see schedule_gpu.
#include "ops/halide/generator_common.h"

namespace hl::halide_gen {

class SsmScan : public Generator<SsmScan> {
 public:
  GeneratorParam<int> chunk{"chunk", 64};
  GeneratorParam<int> vec{"vec", 8};          // vector width along d_v (1: scalar)
  GeneratorParam<bool> parallel{"parallel", true};  // (chunk, head) tasks; the state pass over heads
  GeneratorParam<bool> locality{"locality", true};  // per-chunk intermediates computed at their task
  GeneratorParam<bool> gpu{"gpu", false};
  GeneratorParam<int> gpu_threads{"gpu_threads", 64};     // GPU: threads per block
  GeneratorParam<bool> gpu_shared{"gpu_shared", false};   // GPU: the solve's matrix of a block in shared memory
  GeneratorParam<int> gpu_tile_r{"gpu_tile_r", 1};        // GPU: output rows per thread (state read once for them)

  Input<Buffer<float, 3>> q{"q"};          // (d_k, n_k, T), L2-normalised, scaled by 1/sqrt(d_k)
  Input<Buffer<float, 3>> k{"k"};          // (d_k, n_k, T)
  Input<Buffer<float, 3>> v{"v"};          // (d_v, n_v, T)
  Input<Buffer<float, 2>> beta{"beta"};    // (n_v, T)
  Input<Buffer<float, 2>> g{"g"};          // (n_v, T), log decay
  Input<Buffer<float, 3>> state{"state"};  // (d_v, d_k, n_v)
  Input<int> tiled{"tiled"};               // 1: value head h reads key head h % n_k
  Output<Buffer<float, 3>> o{"o"};                  // (d_v, n_v, T)
  Output<Buffer<float, 3>> state_out{"state_out"};  // (d_v, d_k, n_v)

  void generate() {
    const int C = chunk;
    Var i("i"), j("j"), l("l"), r("r"), s("s"), c("c"), h("h"), t("t");
    const Expr dk = q.dim(0).extent(), nk = q.dim(1).extent(), T = q.dim(2).extent();
    const Expr dv = v.dim(0).extent(), nv = v.dim(1).extent();
    const Expr nc = (T + C - 1) / C;
    // Zero rows past T.
    Func qb = BoundaryConditions::constant_exterior(q, 0.0f, {{Expr(), Expr()}, {Expr(), Expr()}, {0, T}});
    Func kb = BoundaryConditions::constant_exterior(k, 0.0f, {{Expr(), Expr()}, {Expr(), Expr()}, {0, T}});
    Func vb = BoundaryConditions::constant_exterior(v, 0.0f, {{Expr(), Expr()}, {Expr(), Expr()}, {0, T}});
    Func bb = BoundaryConditions::constant_exterior(beta, 0.0f, {{Expr(), Expr()}, {0, T}});
    Func gb = BoundaryConditions::constant_exterior(g, 0.0f, {{Expr(), Expr()}, {0, T}});
    // GPU: the choice as integer arithmetic, not a select on `tiled != 0`: Halide 21 hoists such a condition
    // into a bool kernel argument, which its SPIR-V declares as an OpTypeBool member of the uniform argument
    // block (invalid for Vulkan; spirv-val rejects it) and its runtime packs as one byte. lavapipe loads it
    // as 32 bits, so it also read the next bool's byte: the state pass of a partial last chunk used the
    // grouped head order for tiled heads (measured).
    const Expr tl = clamp(tiled, 0, 1);
    const Expr kh = gpu ? tl * (h % nk) + (1 - tl) * (h / (nv / nk)) : select(tiled != 0, h % nk, h / (nv / nk));

    Func Kc("Kc"), Qc("Qc"), Vc("Vc"), bc("bc"), gc("gc");  // chunk views: (index, row, chunk, head)
    Kc(i, r, c, h) = kb(i, kh, c * C + r);
    Qc(i, r, c, h) = qb(i, kh, c * C + r);
    Vc(j, r, c, h) = vb(j, h, c * C + r);
    bc(r, c, h) = bb(h, c * C + r);
    gc(r, c, h) = gb(h, c * C + r);

    RDom rs(0, C, "rs");
    Func gam("gam");  // inclusive cumulative log decay within the chunk
    gam(r, c, h) = 0.0f;
    gam(r, c, h) += select(rs <= r, gc(rs, c, h), 0.0f);
    Func Gam("Gam");
    Gam(s, r, c, h) = select(s <= r, exp(gam(r, c, h) - gam(s, c, h)), 0.0f);
    Func eg("eg");
    eg(r, c, h) = exp(gam(r, c, h));

    RDom ri(0, dk, "ri");
    Func KK("KK"), QK("QK");  // (s, r): k_s . k_r and q_r . k_s
    Func Kt("Kt");  // keys of the chunk, transposed: (row, index)
    Kt(r, i, c, h) = Kc(i, r, c, h);
    KK(s, r, c, h) = 0.0f;
    KK(s, r, c, h) += Kt(s, ri, c, h) * Kc(ri, r, c, h);
    QK(s, r, c, h) = 0.0f;
    QK(s, r, c, h) += Qc(ri, r, c, h) * Kt(s, ri, c, h);
    Func Nm("Nm");
    Nm(s, r, c, h) = select(s < r, bc(r, c, h) * KK(s, r, c, h) * Gam(s, r, c, h), 0.0f);

    // X = (I + N)^-1 [beta V | beta exp(gam) K], columns j < d_v: U, then d_k columns: W.
    Func X("X");
    X(j, r, c, h) = select(j < dv, bc(r, c, h) * Vc(min(j, dv - 1), r, c, h),
                           bc(r, c, h) * eg(r, c, h) * Kc(max(j - dv, 0), r, c, h));
    RDom rt(0, C, 0, C, "rt");  // rt.x = s (inner), rt.y = r: forward substitution, row by row
    rt.where(rt.x < rt.y);
    X(j, rt.y, c, h) -= Nm(rt.x, rt.y, c, h) * X(j, rt.x, c, h);

    Func lam("lam"), kdec("kdec");
    lam(c, h) = exp(gam(C - 1, c, h));
    kdec(r, c, h) = exp(gam(C - 1, c, h) - gam(r, c, h));

    // The sequential part, chunk by chunk, in one Func Z(j, i, h, c, plane) (Halide allows no cycle between
    // Funcs, and recursive references keep pure variables in place, so both quantities live in Z):
    //   plane 0, i < d_k: the state S before chunk c (c = 0: the carried state; c = nc: the new state);
    //   plane 1, i < C:   Vn of chunk c (row i), starting from U.
    // One update walks the chunks in order; per chunk three stages (R.z), every stage over R.x < d_k and
    // R.y < C (one shape, so Halide's loop bounds from the predicate are right for all of them):
    //   0: Vn[R.y] -= W[R.y][R.x] S[R.x],   1 (R.y = 0): S'[R.x] = exp(gam_last) S[R.x],
    //   2: S'[R.x] += kdec[R.y] K[R.y][R.x] Vn[R.y].
    Func Z("Z");
    Var p("p");
    Z(j, i, h, c, p) = select(p == 1, X(j, clamp(i, 0, C - 1), clamp(c, 0, nc - 1), h),
                              select(c == 0, state(j, clamp(i, 0, dk - 1), h), 0.0f));
    RDom R(0, dk, 0, C, 0, 3, 0, nc, "R");  // R.x key index, R.y row, R.z stage, R.w chunk
    R.where(R.z != 1 || R.y == 0);
    const Expr z_i = select(R.z == 0, R.y, R.x), z_c = R.w + select(R.z == 0, 0, 1), z_p = select(R.z == 0, 1, 0);
    const Expr stage0 = -X(dv + R.x, R.y, R.w, h) * Z(j, R.x, h, R.w, 0);
    const Expr stage1 = lam(R.w, h) * Z(j, R.x, h, R.w, 0);
    const Expr stage2 = kdec(R.y, R.w, h) * Kc(R.x, R.y, R.w, h) * Z(j, R.y, h, R.w, 1);
    Z(j, z_i, h, z_c, z_p) = Z(j, z_i, h, z_c, z_p) + select(R.z == 0, stage0, R.z == 1, stage1, stage2);

    Func QS("QS"), oc("oc");
    QS(j, r, c, h) = 0.0f;
    QS(j, r, c, h) += Qc(ri, r, c, h) * Z(j, ri, h, c, 0);
    oc(j, r, c, h) = eg(r, c, h) * QS(j, r, c, h);
    Func P("P");  // (s, r): q_r . k_s * Gam[r][s]
    P(s, r, c, h) = QK(s, r, c, h) * Gam(s, r, c, h);
    oc(j, r, c, h) += P(rs, r, c, h) * Z(j, rs, h, c, 1);
    o(j, h, t) = oc(j, t % C, t / C, h);
    state_out(j, i, h) = Z(j, i, h, nc, 0);

    // ---- schedules ----
    Var ch("ch"), to("to"), tr("tr");
    if (gpu) {
      schedule_gpu({gam, eg, lam, kdec, KK, QK, Nm, P, X, Z, QS, oc}, rt, R, ri, rs, j, i, s, r, c, h, t, p);
      return;
    }
    const bool par = parallel;
    Z.compute_root();
    Z.update().reorder(j, R.x, R.y, R.z, R.w, h).unroll(R.z);  // unrolled: each stage's selects fold away
    for (Func f : {eg, lam, kdec}) f.compute_root();  // small tables of exp(), not one exp per use
    if (par) Z.update().parallel(h);
    if (!locality) {  // plain: every stage whole, breadth first
      for (Func f : {gam, KK, QK, Nm, P, X, QS, oc}) f.compute_root();
      if (par)
        for (Func f : {KK, QK, Nm, P, X, QS, oc}) f.parallel(h);
      return;
    }
    // Inputs repacked once per (chunk, head), zero-padded, keys also transposed: no boundary selects in the
    // inner loops, and the C x C products vectorise over rows.
    for (Func f : {Kc, Qc, Vc, Kt}) {
      f.compute_root().reorder_storage(f.args()[0], f.args()[1], f.args()[2], f.args()[3]);
      if (par) f.parallel(h);
      if (vec > 1) f.vectorize(f.args()[0], vec, kGuard);
    }
    KK.update().reorder(s, ri, r);
    QK.update().reorder(s, ri, r);
    if (vec > 1) {
      for (Func f : {KK, QK}) {
        f.vectorize(s, vec, kGuard);
        f.update().vectorize(s, vec, kGuard);
      }
    }
    // Chunk-parallel stage 1: per (chunk, head) task, gam, KK, Nm -> X (the solve).
    X.compute_root().reorder(j, r, c, h).fuse(c, h, ch);
    X.update().reorder(j, rt.x, rt.y, c, h).fuse(c, h, ch);
    gam.compute_root();  // tiny, used by every stage
    KK.compute_at(X, ch);
    Nm.compute_at(X, ch);
    if (par) {
      X.parallel(ch);
      X.update().parallel(ch);
    }
    // Chunk-parallel stage 3: the output of each (chunk, head).
    o.split(t, to, tr, C, kGuard).reorder(j, tr, h, to);
    if (par) o.parallel(to);
    for (Func f : {QS, oc, QK, P}) f.compute_at(o, h);
    QS.update().reorder(j, ri, r);
    oc.update().reorder(j, rs, r);
    if (vec > 1) {
      for (Func f : {X, QS, oc}) {
        f.vectorize(j, vec, kGuard);
        f.update().vectorize(j, vec, kGuard);
      }
      Z.vectorize(j, vec, kGuard);
      Z.update().vectorize(j, vec, kGuard);
      o.vectorize(j, vec, kGuard);
      state_out.vectorize(j, vec, kGuard);
    }
  }

  // GPU: every intermediate in device memory (compute_root), each stage its own kernel; the sequential
  // parts (the solve over rows, the state pass over chunks) serial inside one thread per column: a column
  // of [U | W] (and of the state S, of Vn and of o) depends on no other column. gpu_shared: a block's
  // unit-lower-triangular matrix N (C x C) staged in shared memory for the block's solve.
  // Each output thread computes gpu_tile_r rows of a chunk, reading each state and Vn element once for them.
  struct Stages {
    Func gam, eg, lam, kdec, KK, QK, Nm, P, X, Z, QS, oc;
  };
  void schedule_gpu(const Stages& st, RDom rt, RDom R, RDom ri, RDom rs, Var j, Var i, Var s, Var r, Var c, Var h,
                    Var t, Var p) {
    auto [gam, eg, lam, kdec, KK, QK, Nm, P, X, Z, QS, oc] = st;
    const int T = gpu_threads;
    Var bx("bx"), by("by"), bz("bz"), tx("tx"), ty("ty"), tz("tz"), ch("ch"), cp("cp"), hcp("hcp");
    Var jb("jb"), jt("jt"), so("so"), si("si"), ro("ro"), rr("rr");
    Func gamw = gam.in();  // gam accumulates; its wrapper is the kernel that stores it
    gamw.compute_root().fuse(c, h, ch).gpu_tile(r, ch, bx, by, tx, ty, T, 1, kGuard);
    gam.compute_at(gamw, tx);
    eg.compute_root().fuse(c, h, ch).gpu_tile(r, ch, bx, by, tx, ty, T, 1, kGuard);
    kdec.compute_root().fuse(c, h, ch).gpu_tile(r, ch, bx, by, tx, ty, T, 1, kGuard);
    lam.compute_root().gpu_tile(c, h, bx, by, tx, ty, T, 1, kGuard);
    // C x C table of the outputs' weights P of a (chunk, head): one thread per entry, its d_k products serial.
    P.compute_root().fuse(c, h, ch).gpu_tile(s, r, ch, bx, by, bz, tx, ty, tz, T, 1, 1, kGuard);
    QK.compute_at(P, tx);
    // The solve: the right-hand sides' rows first (one thread per value), then forward substitution, one
    // thread per column of [U | W] running over the rows.
    X.compute_root().fuse(c, h, ch).gpu_tile(j, r, ch, bx, by, bz, tx, ty, tz, T, 1, 1, kGuard);
    X.update().split(j, jb, jt, T, kGuard).reorder(rt.x, rt.y, jt, jb, c, h).gpu_blocks(jb, c, h).gpu_threads(jt);
    // N: one thread per entry, its d_k products serial; gpu_shared: the block's N (C x C) copied into shared
    // memory for its solve, a column per thread.
    Nm.compute_root().fuse(c, h, ch).gpu_tile(s, r, ch, bx, by, bz, tx, ty, tz, T, 1, 1, kGuard);
    KK.compute_at(Nm, tx);
    if (gpu_shared) Nm.in(X).compute_at(X, jb).split(s, so, si, T, kGuard).reorder(r, so, si).gpu_threads(si);
    // The state pass: one thread per (value column, head), all chunks in order.
    Z.compute_root().fuse(c, p, cp).fuse(h, cp, hcp).gpu_tile(j, i, hcp, bx, by, bz, tx, ty, tz, T, 1, 1, kGuard);
    // Not partitioned: the partial last chunk's loop would be entered on a bool kernel argument (see kh).
    Z.update()
        .split(j, jb, jt, T, kGuard)
        .reorder(R.x, R.y, R.z, R.w, jt, jb, h)
        .unroll(R.z)
        .gpu_blocks(jb, h)
        .gpu_threads(jt)
        .never_partition_all();
    state_out.gpu_tile(j, i, h, bx, by, bz, tx, ty, tz, T, 1, 1, kGuard);
    // Outputs: a thread computes gpu_tile_r rows of one value column of a chunk, the rows innermost in both
    // sums (each state / Vn element loaded once for them), into a chunk-shaped buffer that o gathers (at o
    // itself, the row t % C of a thread's token was not bounded to a point: every thread computed all C).
    Func ocw = oc.in();
    ocw.compute_root()
        .split(r, ro, rr, gpu_tile_r, kGuard)
        .split(j, jb, jt, T, kGuard)
        .fuse(c, h, ch)
        .reorder(rr, jt, jb, ro, ch)
        .gpu_blocks(jb, ro, ch)
        .gpu_threads(jt);
    QS.compute_at(ocw, jt).bound_storage(r, gpu_tile_r);
    oc.compute_at(ocw, jt).bound_storage(r, gpu_tile_r);
    QS.update().reorder(r, ri.x, j, c, h);
    oc.update().reorder(r, rs.x, j, c, h);
    o.gpu_tile(j, h, t, bx, by, bz, tx, ty, tz, T, 1, 1, kGuard);
  }
};

// One chunk of the chunked form, every product a register-tiled GEMM: the caller walks the chunks (the only
// sequential part) and passes each as its own call, the state updated in place (every element of a head's state is
// read, by K S and Q S, before the head's S' is written). Per value head h, with the chunk's Tc <= C tokens padded to
// C with zero rows:
//   KQ  = [K; Q] (2C x d_k),  KQK = K KQ^T (k_s . k_r, then k_s . q_r),  A = (I + N)^-1 (unit lower triangular),
//   KQS = KQ S (K S, then Q S),  Vt = beta (V - e^gam K S),  Vn = A Vt  (= U - W S of the one-pipeline form),
//   o   = e^gam Q S + P Vn,  S' = e^gam_last S + (kdec K)^T Vn.
// This needs 3 d_k d_v + O(C d) multiply-adds per token, against the one-pipeline form's extra C^2 d_k for W.
// Schedule: tasks over value heads (o and state_out fused at h), everything of a head computed at its task, each
// product in tile_j x tile_r register tiles with its reduction outside the unrolled tile.
class SsmScanChunk : public Generator<SsmScanChunk> {
 public:
  GeneratorParam<int> chunk{"chunk", 16};   // C: 8 and 16 run; 32 with 16-column tiles fails a bounds check at run time
  GeneratorParam<int> vec{"vec", 8};        // vector width along the tiles' columns
  GeneratorParam<int> tile_j{"tile_j", 16};  // register tile: columns (a multiple of vec)
  GeneratorParam<int> tile_r{"tile_r", 4};   // ... and rows

  Input<Buffer<float, 3>> q{"q"};          // (d_k, n_k, Tc), Tc <= chunk (the wrapper's calls; rows past C unread)
  Input<Buffer<float, 3>> k{"k"};          // (d_k, n_k, Tc)
  Input<Buffer<float, 3>> v{"v"};          // (d_v, n_v, Tc)
  Input<Buffer<float, 2>> beta{"beta"};    // (n_v, Tc)
  Input<Buffer<float, 2>> g{"g"};          // (n_v, Tc)
  Input<Buffer<float, 3>> state{"state"};  // (d_v, d_k, n_v)
  Input<int> tiled{"tiled"};
  Output<Buffer<float, 3>> o{"o"};                  // (d_v, n_v, Tc)
  Output<Buffer<float, 3>> state_out{"state_out"};  // (d_v, d_k, n_v): may be the state's own memory

  void generate() {
    const int C = chunk;
    Var i("i"), j("j"), r("r"), s("s"), h("h"), t("t");
    const Expr dk = q.dim(0).extent(), nk = q.dim(1).extent(), Tc = q.dim(2).extent();
    const Expr dv = v.dim(0).extent(), nv = v.dim(1).extent();
    // Zero past Tc rows and past the register tiles' columns (d_v, d_k); the head index is always in range, and a
    // bound on it would stay in the inner loops.
    const Range any{Expr(), Expr()};
    Func qb = BoundaryConditions::constant_exterior(q, 0.0f, Region{Range(0, dk), any, Range(0, Tc)});
    Func kb = BoundaryConditions::constant_exterior(k, 0.0f, Region{Range(0, dk), any, Range(0, Tc)});
    Func vb = BoundaryConditions::constant_exterior(v, 0.0f, Region{Range(0, dv), any, Range(0, Tc)});
    Func sb = BoundaryConditions::constant_exterior(state, 0.0f, Region{Range(0, dv), Range(0, dk), any});
    Func bb = BoundaryConditions::constant_exterior(beta, 0.0f, Region{any, Range(0, Tc)});
    Func gb = BoundaryConditions::constant_exterior(g, 0.0f, Region{any, Range(0, Tc)});
    const Expr kh = select(tiled != 0, h % nk, h / (nv / nk));

    Func KQ("KQ"), Kt("Kt");  // KQ (key index, row < 2C): keys, then queries; Kt (row, key index): keys
    KQ(i, r, h) = select(r < C, kb(i, kh, r), qb(i, kh, r - C));
    Kt(s, i, h) = kb(i, kh, s);
    RDom rg(0, C, "rg");
    Func gam("gam"), eg("eg"), kdec("kdec"), lam("lam"), Gam("Gam");
    gam(r, h) = 0.0f;
    gam(r, h) += select(rg <= r, gb(h, rg), 0.0f);
    eg(r, h) = exp(gam(r, h));
    kdec(r, h) = exp(gam(C - 1, h) - gam(r, h));
    lam(h) = exp(gam(C - 1, h));
    Gam(s, r, h) = select(s <= r, exp(gam(r, h) - gam(s, h)), 0.0f);

    RDom rk(0, dk, "rk"), rc(0, C, "rc");
    Func KQK("KQK");  // (s, r2): k_s . KQ row r2
    KQK(s, r, h) = 0.0f;
    KQK(s, r, h) += Kt(s, rk, h) * KQ(rk, r, h);
    Func A("A");  // (s, r): A[r][s], row by row: A[r] = e_r - sum_{m < r} N[r][m] A[m], N[r][m] = beta_r k_r.k_m Gam[r][m]
    RDom ra(0, C, 0, C, "ra");
    ra.where(ra.x < ra.y);
    A(s, r, h) = select(s == r, 1.0f, 0.0f);
    A(s, ra.y, h) -= bb(h, ra.y) * KQK(ra.x, ra.y, h) * Gam(ra.x, ra.y, h) * A(s, ra.x, h);
    Func P("P"), Kd("Kd");  // the outputs' weights P[r][s] = q_r . k_s Gam[r][s]; the keys decayed to the chunk's end
    P(s, r, h) = KQK(s, r + C, h) * Gam(s, r, h);
    Kd(s, i, h) = kdec(s, h) * Kt(s, i, h);

    Func KQS("KQS");  // (j, r2): row r2 of KQ times S
    KQS(j, r, h) = 0.0f;
    KQS(j, r, h) += KQ(rk, r, h) * sb(j, rk, h);
    Func Vt("Vt"), Vn("Vn");
    Vt(j, r, h) = bb(h, r) * (vb(j, h, r) - eg(r, h) * KQS(j, r, h));
    Vn(j, r, h) = 0.0f;
    Vn(j, r, h) += A(rc, r, h) * Vt(j, rc, h);
    Func osum("osum"), ssum("ssum");
    osum(j, r, h) = eg(r, h) * KQS(j, r + C, h);
    osum(j, r, h) += P(rc, r, h) * Vn(j, rc, h);
    ssum(j, i, h) = lam(h) * sb(j, i, h);
    ssum(j, i, h) += Kd(rc, i, h) * Vn(j, rc, h);
    o(j, h, t) = osum(j, t, h);
    state_out(j, i, h) = ssum(j, i, h);

    // ---- schedule ----
    const int vw = std::max(1, int(vec)), TJ = std::max(vw, int(tile_j)), TR = std::max(1, int(tile_r));
    o.reorder(j, t, h).parallel(h);
    state_out.reorder(j, i, h).parallel(h);
    const LoopLevel task(o, h);
    for (Func f : {KQ, Kt, gam, eg, kdec, lam, Gam, A, P, Kd, Vt}) f.compute_at(task);
    for (Func f : {KQ, Vt}) f.vectorize(f.args()[0], vw, kGuard);
    for (Func f : {Gam, A, P, Kd}) f.vectorize(f.args()[0], vw, kGuard);
    A.update().vectorize(s, vw, kGuard);
    // y (pure, columns x, rows y) in TJ x TR register tiles, acc (its sums) at each tile: the tile's TJ / vw x TR
    // vectors stay in registers through the reduction (whole tiles also at the edges, on the zero exterior; y's
    // stores guarded); column blocks outermost, so a block of the right operand stays in L1 across the row tiles.
    auto tiles = [&](Func y, Func acc, Var x, Var yv, std::vector<RVar> red) {
      Var xo("xo"), xi("xi"), yo("yo"), yi("yi");
      y.tile(x, yv, xo, yo, xi, yi, TJ, TR, kGuard).reorder(xi, yi, yo, xo).vectorize(xi, vw, kGuard).unroll(xi).unroll(yi);
      const Var ax = acc.args()[0], ay = acc.args()[1];
      acc.compute_at(y, yo).bound_extent(ax, TJ).bound_extent(ay, TR).store_in(MemoryType::Register);
      acc.vectorize(ax, vw).unroll(ax).unroll(ay);
      std::vector<VarOrRVar> order{ax, ay};
      for (RVar rv : red) order.push_back(rv);
      acc.update().reorder(order).vectorize(ax, vw).unroll(ax).unroll(ay);
    };
    for (auto [f, x, y, red] : {std::tuple{KQK, s, r, rk}, {KQS, j, r, rk}, {Vn, j, r, rc}}) {
      Func w = f.in();
      w.compute_at(task);
      tiles(w, f, x, y, {red});
    }
    tiles(o, osum, j, t, {rc});
    tiles(state_out, ssum, j, i, {rc});
    state_out.compute_with(o, h);
  }
};

// One token (decode) in the recurrent form, which the chunked form pads to a whole chunk: with alpha = exp(g) and k, q
// of the value head's key head,
//   delta = beta (v - alpha S k),   S' = alpha S + delta k^T,   o = S' q = alpha S q + delta (k . q),
// so the state is read twice (S k and S q in one pass; S') and written once. The same inputs and outputs as SsmScan at
// T = 1. Schedules: vec (vectors along d_v), parallel (tasks over value heads).
class SsmScanStep : public Generator<SsmScanStep> {
 public:
  GeneratorParam<int> vec{"vec", 8};
  GeneratorParam<bool> parallel{"parallel", false};

  Input<Buffer<float, 3>> q{"q"};          // (d_k, n_k, 1)
  Input<Buffer<float, 3>> k{"k"};          // (d_k, n_k, 1)
  Input<Buffer<float, 3>> v{"v"};          // (d_v, n_v, 1)
  Input<Buffer<float, 2>> beta{"beta"};    // (n_v, 1)
  Input<Buffer<float, 2>> g{"g"};          // (n_v, 1)
  Input<Buffer<float, 3>> state{"state"};  // (d_v, d_k, n_v)
  Input<int> tiled{"tiled"};
  Output<Buffer<float, 3>> o{"o"};                  // (d_v, n_v, 1)
  Output<Buffer<float, 3>> state_out{"state_out"};  // (d_v, d_k, n_v)

  void generate() {
    Var j("j"), i("i"), h("h"), t("t");
    const Expr dk = q.dim(0).extent(), nk = q.dim(1).extent(), nv = v.dim(1).extent();
    const Expr kh = select(tiled != 0, h % nk, h / (nv / nk));
    RDom ri(0, dk, "ri");
    Func skq("skq"), kq("kq"), delta("delta");
    skq(j, h) = Tuple(0.0f, 0.0f);  // (S k, S q)
    skq(j, h) = Tuple(skq(j, h)[0] + state(j, ri, h) * k(ri, kh, 0), skq(j, h)[1] + state(j, ri, h) * q(ri, kh, 0));
    kq(h) = 0.0f;
    kq(h) += k(ri, kh, 0) * q(ri, kh, 0);
    const Expr alpha = exp(g(h, 0));
    delta(j, h) = beta(h, 0) * (v(j, h, 0) - alpha * skq(j, h)[0]);
    state_out(j, i, h) = alpha * state(j, i, h) + delta(j, h) * k(i, kh, 0);
    o(j, h, t) = alpha * skq(j, h)[1] + delta(j, h) * kq(h);

    // ---- schedule ----
    // S k and S q over blocks of 2 vw values of j with the key index inside, so the block's sums stay in registers.
    const int vw = vec;
    Var jo("jo"), ji("ji");
    skq.compute_root();
    skq.update().split(j, jo, ji, 2 * vw, kGuard).reorder(ji, ri, jo, h);
    kq.compute_root();
    delta.compute_root();
    if (parallel) {
      skq.parallel(h);
      skq.update().parallel(h);
      state_out.parallel(h);
    }
    if (vw > 1) {
      for (Func f : {skq, delta}) f.vectorize(j, vw, kGuard);
      skq.update().vectorize(ji, vw, kGuard).unroll(ji);
      state_out.vectorize(j, vw, kGuard);
      o.vectorize(j, vw, kGuard);
    }
  }
};

}  // namespace hl::halide_gen

HALIDE_REGISTER_GENERATOR(hl::halide_gen::SsmScan, hl_ssm_scan)
HALIDE_REGISTER_GENERATOR(hl::halide_gen::SsmScanStep, hl_ssm_scan_step)
HALIDE_REGISTER_GENERATOR(hl::halide_gen::SsmScanChunk, hl_ssm_scan_chunk)
